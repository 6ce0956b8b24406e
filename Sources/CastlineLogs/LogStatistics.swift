import CastCore
import CastLogging

/// `castline logs stats`: what the records say about traffic, latency, errors, suspends and
/// sessions. Feed records in log order with ``add(_:)``; read ``report``. Pure.
package struct LogStatistics: Sendable {
    package struct MessageKey: Hashable, Sendable, Comparable {
        package var namespace: String
        package var type: String
        package var direction: String
        package init(namespace: String, type: String, direction: String) {
            self.namespace = namespace
            self.type = type
            self.direction = direction
        }
        package static func < (a: Self, b: Self) -> Bool { (a.namespace, a.type, a.direction) < (b.namespace, b.type, b.direction) }
    }

    package struct SessionRecord: Sendable, Equatable {
        package var device: String
        package var deviceName: String
        package var localSession: String
        package var appSession: String?
        package var start: Int64
        package var end: Int64?
        /// `requested` when ended on request (`requested while suspended (…)` when the end found it
        /// suspended: an outage the caller gave up on); the CastSessionError name otherwise; nil while open.
        package var endReason: String?
        package var suspends = 0
        /// The apps this session let go of while it stayed up (a following session: the hub's
        /// link to a device): "CC1AD845 stopped", "CC1AD845 replaced".
        package var appChanges: [AppChange] = []
    }

    package struct AppChange: Sendable, Equatable {
        package var time: Int64
        package var appID: String
        /// "stopped" or "replaced".
        package var change: String
    }

    package struct Suspension: Sendable, Equatable {
        package var device: String
        package var start: Int64
        /// When it resumed, or when its session ended still suspended; nil while open.
        package var end: Int64?
        package var reason: String
        /// Ended by `didResume` (not by the session's end).
        package var resumed = false
    }

    /// A screen a job keeps its media or page on: how long it showed, and every gap with its reason.
    package struct Screen: Sendable, Equatable {
        package var device: String
        package var deviceName: String
        package var url: String
        /// Nanoseconds the page showed, up to the last record.
        package var shown: Int64 = 0
        package var keepAlives = 0
        package var gaps: [Gap] = []
        /// From when to when it showed what (the last one may still be open).
        package var shows: [Show] = []
        var shownSince: Int64?
    }

    package struct Show: Sendable, Equatable {
        package var start: Int64
        package var end: Int64?
        package var url: String
    }

    package struct Gap: Sendable, Equatable {
        package var start: Int64
        /// nil: the page had not come back by the last record.
        package var end: Int64?
        package var reason: String
    }

    package private(set) var screens: [Screen] = []
    private var screenIndex: [String: Int] = [:]

    package private(set) var messages: [MessageKey: Int] = [:]
    /// Request type → latencies in milliseconds.
    package private(set) var latencies: [String: [Double]] = [:]
    package private(set) var unanswered: [String: Int] = [:]
    /// Error kind → count: failed responses (`LOAD_FAILED`), session end reasons, error records by class.
    package internal(set) var errors: [String: Int] = [:]
    package private(set) var sessions: [SessionRecord] = []
    package private(set) var suspensions: [Suspension] = []
    package private(set) var reconnectAttempts = 0
    /// Sink name → records it dropped (LogSystem overflow reports, plugin sink problems).
    package private(set) var droppedBySink: [String: Int64] = [:]
    package private(set) var records = 0
    /// Plugin failures by plugin, problem and device (``PluginFailureKey``).
    package internal(set) var pluginFailures: [PluginFailureKey: Int] = [:]
    /// App stops by cause (``StopCause``).
    package internal(set) var appStops: [String: Int] = [:]
    /// Media or page servers found down (`ServerProbe` records), by `scheme://host:port`.
    package internal(set) var serversDown: [String: ServerDown] = [:]
    var stopCauses = AppStopClassifier()
    /// What each screen showed, per content (``DisplayTimeline``): the report's intervals, summed.
    package private(set) var display = DisplayTimeline()
    package private(set) var first: Int64?
    package private(set) var last: Int64?
    /// Replies whose request was before them by a negative time (clock jumps), ignored.
    package private(set) var negativeLatencies = 0

    private var pending: [String: (type: String, time: Int64)] = [:]
    /// Open sessions by `pid|device|localSession`.
    private var openSessions: [String: Int] = [:]
    private var daemons = DaemonRuns()
    private var openSuspensions: [String: Int] = [:]

    package init() {}

    static let failureTypes: Set<String> = ["LOAD_FAILED", "LOAD_CANCELLED", "INVALID_REQUEST", "INVALID_PLAYER_STATE", "LAUNCH_ERROR"]

    package mutating func add(_ e: LogEntry) {
        records += 1
        first = min(first ?? e.time, e.time)
        last = max(last ?? e.time, e.time)
        if e.className.hasPrefix("CastChannel.") { traffic(e) }
        for other in daemons.note(e) { endSessions(ofDaemon: other) }
        if e.className == "CrashReporter", e.text("role") == "daemon" {
            errors["\(DaemonRuns.crashed): \(e.text("signal") ?? "?")" + (e.text("library").map { " in " + ($0.split(separator: "/").last.map(String.init) ?? $0) } ?? ""), default: 0] += 1
        }
        if e.className == "CastSession" { session(e) }
        if e.className == "JobDriver", let page = e.text("page") { screen(e, page) }
        if e.className == "LogSystem", let sink = e.text("sink"), let dropped = e.integer("dropped") {
            droppedBySink[sink, default: 0] += dropped
        }
        if e.level >= .error, e.level != .none { errors["error record: \(e.className)", default: 0] += 1 }
        if e.level >= .warning, e.level != .none, e.text("problem") != nil, e.text("plugin") != nil || e.className.hasPrefix("Plugin") {
            pluginFailure(e)
        }
        if e.className == "ServerProbe", let server = e.text("serverDown") {
            serverDown(e, server)
            // A page's open gap names the server: the cause, not only the app's end.
            if let device = e.text("device"), let index = screenIndex[device], let gap = screens[index].gaps.indices.last,
               screens[index].gaps[gap].end == nil, !screens[index].gaps[gap].reason.contains(server) {
                screens[index].gaps[gap].reason += "; the server is down: \(server)"
            }
        }
        display.add(e)
        if let stop = stopCauses.note(e) {
            appStops[stop.cause, default: 0] += 1
            errors["app stopped: \(stop.cause)", default: 0] += 1
        }
    }

    private mutating func traffic(_ e: LogEntry) {
        guard let direction = e.text("direction") else { return }
        let namespace = e.text("namespace") ?? String(e.className.dropFirst("CastChannel.".count))
        let type = e.text("type") ?? "-"
        messages[MessageKey(namespace: namespace, type: type, direction: direction), default: 0] += 1
        guard let id = e.integer("requestId"), id != 0 else { return }
        let connection = "\(e.text("local") ?? "")|\(e.text("peer") ?? "")|\(id)"
        if direction == "out" {
            if let stale = pending[connection] { unanswered[stale.type, default: 0] += 1 }
            pending[connection] = (type, e.time)
        } else if direction == "in", let request = pending.removeValue(forKey: connection) {
            let ms = Double(e.time - request.time) / 1e6
            if ms < 0 { negativeLatencies += 1 } else { latencies[request.type, default: []].append(ms) }
            if Self.failureTypes.contains(type) { errors["\(request.type) → \(type)", default: 0] += 1 }
        }
    }

    /// Sessions pair within their process: a new daemon ends what an earlier one left open, at
    /// its last record, with how it ended (``DaemonRuns/endReason(of:)``).
    private mutating func endSessions(ofDaemon pid: String) {
        for (key, index) in openSessions where key.hasPrefix(pid + "|") {
            openSessions[key] = nil
            guard sessions[index].end == nil else { continue }
            sessions[index].end = max(sessions[index].start, daemons.last(of: pid) ?? sessions[index].start)
            sessions[index].endReason = daemons.endReason(of: pid)
            if let s = openSuspensions.removeValue(forKey: key) { suspensions[s].end = sessions[index].end }
        }
    }

    private mutating func session(_ e: LogEntry) {
        let device = e.text("device") ?? "?"
        let key = "\(e.text("pid") ?? "")|\(device)|\(e.text("localSession") ?? "?")"
        guard let event = e.text("event") else {
            if e.body.hasPrefix("reconnect attempt") { reconnectAttempts += 1 }
            if let change = e.text("change"), change != "stopping", let app = e.text("appId"), let index = openSessions[key] {
                sessions[index].appChanges.append(AppChange(time: e.time, appID: app, change: change))
            }
            return
        }
        switch event {
        case "willStart":
            if let open = openSessions[key], sessions[open].end == nil {
                sessions[open].endReason = "unknown (a new session began: the process restarted?)"
            }
            openSessions[key] = sessions.count
            sessions.append(SessionRecord(device: device, deviceName: e.text("deviceName") ?? device,
                                          localSession: e.text("localSession") ?? "?", start: e.time))
        case "didStart", "didResume":
            if let index = openSessions[key], let app = e.text("session") { sessions[index].appSession = app }
            if event == "didResume", let s = openSuspensions.removeValue(forKey: key) {
                suspensions[s].end = e.time
                suspensions[s].resumed = true
            }
        case "didSuspend":
            if let index = openSessions[key] { sessions[index].suspends += 1 }
            openSuspensions[key] = suspensions.count
            suspensions.append(Suspension(device: device, start: e.time, reason: String(e.body.dropFirst("didSuspend(".count).dropLast())))
        case "didFailToStart", "didEnd":
            let reason = e.text("endReason") ?? "requested"
            // An end that finds the session suspended closes the suspension without a resume.
            let suspended = openSuspensions.removeValue(forKey: key)
            if let s = suspended { suspensions[s].end = e.time }
            if let index = openSessions.removeValue(forKey: key) {
                sessions[index].end = e.time
                if event == "didFailToStart" {
                    sessions[index].endReason = "failedToStart: \(reason)"
                } else if reason == "requested", let s = suspended {
                    sessions[index].endReason = "requested while suspended (\(suspensions[s].reason))"
                } else {
                    sessions[index].endReason = reason
                }
            }
            if reason != "requested" { errors["session \(event == "didFailToStart" ? "failed to start" : "ended"): \(reason)", default: 0] += 1 }
        default:
            break
        }
    }

    /// JobDriver's display records (`page`: shown, kept, gone) of jobs, per device.
    private mutating func screen(_ e: LogEntry, _ page: String) {
        guard let device = e.text("device") else { return }
        let index: Int
        if let known = screenIndex[device] { index = known } else {
            index = screens.count
            screenIndex[device] = index
            screens.append(Screen(device: device, deviceName: e.text("deviceName") ?? device, url: e.text("url") ?? ""))
        }
        switch page {
        case "shown":
            if let url = e.text("url") { screens[index].url = url }
            if screens[index].shownSince == nil {
                screens[index].shownSince = e.time
                screens[index].shows.append(Show(start: e.time, url: e.text("url") ?? screens[index].url))
            }
            if let last = screens[index].gaps.indices.last, screens[index].gaps[last].end == nil { screens[index].gaps[last].end = e.time }
        case "kept":
            screens[index].keepAlives += 1
        case "gone":
            if let since = screens[index].shownSince.take() {
                screens[index].shown += e.time - since
                if let last = screens[index].shows.indices.last { screens[index].shows[last].end = e.time }
            }
            screens[index].gaps.append(Gap(start: e.time, reason: e.text("reason") ?? "unknown"))
        default:
            break
        }
    }

    /// The screens with the time a page still shows at the end counted up to the last record.
    package var screenReport: [Screen] {
        screens.map { screen in
            var s = screen
            if let since = s.shownSince, let last { s.shown += max(0, last - since) }
            return s
        }
    }

    /// Requests still waiting at the end, by type (with the ones a newer request replaced).
    package var unansweredByType: [String: Int] {
        var result = unanswered
        for request in pending.values { result[request.type, default: 0] += 1 }
        return result
    }
}

/// p50/p95/p99/max of a sample (nearest rank).
package struct Percentiles: Sendable, Equatable {
    package var count: Int
    package var p50: Double
    package var p95: Double
    package var p99: Double
    package var max: Double

    package init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double { sorted[Swift.min(sorted.count - 1, Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        count = sorted.count
        p50 = rank(0.50)
        p95 = rank(0.95)
        p99 = rank(0.99)
        max = sorted[sorted.count - 1]
    }
}

extension Optional {
    /// The value, leaving nil behind.
    mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
