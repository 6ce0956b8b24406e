import CastCore
import CastLogging

/// Builds the ``TimelineModel`` for `castline logs timeline` from records in log order: one lane
/// per device (CastSession records carry the device id and endpoint; traffic records the peer
/// address, mapped to the device by that endpoint), sessions from the session events, state
/// changes from the `state A → B` records, requests paired with their replies, and failures
/// (failed replies, failed starts, error ends, suspends, error records). Pure.
///
/// Records of several processes in one log (a daemon, a CLI command asked to write there, a
/// daemon restarted) keep apart by their `pid`: sessions pair within their process only, a CLI
/// session on a device the daemon follows joins that device's lane (by its endpoint) as a
/// session of its own, and when a new daemon appears, the sessions the previous one left open
/// end where its records end ("castline stopped").
package struct TimelineBuilder: Sendable {
    private var lanes: [String: TimelineLane] = [:]
    private var order: [String] = []
    private var endpointToDevice: [String: String] = [:]
    /// Open sessions by `pid|device|localSession` → (lane, index in the lane).
    private var openSessions: [String: (lane: String, index: Int)] = [:]
    private var pending: [String: (lane: String, index: Int, time: Int64)] = [:]
    private var first: Int64?
    private var last: Int64?
    /// What each screen showed, and why apps stopped: the lanes' content and story.
    private var display = DisplayTimeline()
    private var stops = AppStopClassifier()
    /// The daemons and how each ended (a crash, an orderly stop).
    private var daemons = DaemonRuns()

    package init() {}

    package mutating func add(_ e: LogEntry) {
        first = min(first ?? e.time, e.time)
        last = max(last ?? e.time, e.time)
        noteProcess(e)
        display.add(e)
        story(e)
        if e.className == "CastSession" {
            session(e)
        } else if e.className.hasPrefix("CastChannel.") {
            traffic(e)
        } else if e.level >= .error, e.level != .none, let device = e.text("device") {
            self[lane: device, name: e.text("deviceName"), site: e.agent].failures.append(TimelineFailure(time: e.time, kind: e.className, message: e.body))
        }
    }

    private subscript(lane id: String, name name: String?, site site: String? = nil) -> TimelineLane {
        get {
            var lane = lanes[id] ?? TimelineLane(deviceID: id, deviceName: name ?? id)
            if lane.site == nil { lane.site = site }
            return lane
        }
        set {
            if lanes[id] == nil { order.append(id) }
            lanes[id] = newValue
        }
    }

    /// The story's events: what happened to a screen and why (the daemon's records; a CLI
    /// command's own sessions are in the lanes, not in the screen's story).
    private mutating func story(_ e: LogEntry) {
        guard e.text("role") != "cli", let device = e.text("device") else { return }
        var event: TimelineEvent?
        if let stop = stops.note(e) {
            event = TimelineEvent(time: e.time, kind: .app, text: "app \(stop.app) \(stop.cause)")
        } else if e.className == "CastSession", e.text("change") == "replaced", let app = e.text("appId") {
            event = TimelineEvent(time: e.time, kind: .app, text: e.body.isEmpty ? "app \(app) replaced" : e.body)
        } else if e.className == "DeviceRegistry", let owner = e.text("ownerKind") {
            let kind: TimelineEvent.Kind = owner == "other" ? .takeover : owner == "announcement" ? .announcement : .owner
            event = TimelineEvent(time: e.time, kind: kind, text: e.body)
        } else if e.className == "JobDriver", let page = e.text("page"), page != "kept" {
            event = TimelineEvent(time: e.time, kind: .page, text: e.body)
        } else if e.className == "ServerProbe", let server = e.text("serverDown") {
            event = TimelineEvent(time: e.time, kind: .server, text: "server down: \(server) (\(e.text("reason") ?? "?"))")
        } else if e.level >= .warning, e.level != .none, let plugin = e.text("plugin"), e.text("problem") != nil || e.text("event") == "unavailable" {
            event = TimelineEvent(time: e.time, kind: .plugin, text: "\(plugin): \(e.body)")
        }
        if e.className == "CastSession", let event = e.text("event"), event == "didEnd" || event == "didFailToStart",
           let requests = e.integer("requests") {
            var l = self[lane: laneID(device), name: nil]
            l.summaryRequests += Int(requests)
            l.summaryFailedRequests += Int(e.integer("failedRequests") ?? 0)
            self[lane: laneID(device), name: nil] = l
        }
        guard let event else { return }
        var l = self[lane: laneID(device), name: e.text("deviceName")]
        l.story.append(event)
        self[lane: laneID(device), name: nil] = l
    }

    /// The lane of a device id (an address a direct-mode command used maps to the device found there).
    private func laneID(_ device: String) -> String { endpointToDevice[device] ?? device }

    /// A record's process (`pid`, `role`). The first record of a new daemon ends what an earlier
    /// daemon left open, at that daemon's last record: it stopped (or crashed) there.
    private mutating func noteProcess(_ e: LogEntry) {
        for other in daemons.note(e) {
            endSessions(ofProcess: other, at: daemons.last(of: other) ?? e.time, reason: daemons.endReason(of: other))
        }
    }

    private mutating func endSessions(ofProcess pid: String, at time: Int64, reason: String) {
        for (key, open) in openSessions where key.hasPrefix(pid + "|") {
            openSessions.removeValue(forKey: key)
            guard var l = lanes[open.lane], l.sessions.indices.contains(open.index), l.sessions[open.index].end == nil else { continue }
            l.sessions[open.index].end = max(time, l.sessions[open.index].start)
            l.sessions[open.index].endReason = reason
            lanes[open.lane] = l
        }
    }

    private mutating func session(_ e: LogEntry) {
        guard var device = e.text("device") else { return }
        let pid = e.text("pid") ?? ""
        if let endpoint = e.text("endpoint") {
            // A command in direct mode may know the device by its address only: the lane of the
            // device another process found at that address.
            if let known = endpointToDevice[endpoint], device == endpoint { device = known } else { endpointToDevice[endpoint] = device }
        }
        let key = "\(pid)|\(device)|\(e.text("localSession") ?? "?")"
        var l = self[lane: device, name: e.text("deviceName"), site: e.agent]
        if let name = e.text("deviceName"), lanes[device] == nil || e.text("role") != "cli" { l.deviceName = name }
        defer { lanes[device] = l; if !order.contains(device) { order.append(device) } }
        if let to = e.text("state"), let from = e.text("from"), let index = openSessions[key]?.index {
            l.sessions[index].states.append(TimelineStateChange(time: e.time, from: from, to: to, reason: Self.reason(in: e.body)))
            return
        }
        guard let event = e.text("event") else { return }
        switch event {
        case "willStart":
            if let index = openSessions[key]?.index, l.sessions[index].end == nil {
                l.sessions[index].end = e.time
                l.sessions[index].endReason = "unknown"
            }
            openSessions[key] = (device, l.sessions.count)
            var started = TimelineSession(id: e.text("localSession").map { "#\($0)" } ?? "?", start: e.time,
                                          states: [TimelineStateChange(time: e.time, from: "idle", to: "connecting")])
            started.process = Self.process(of: e)
            l.sessions.append(started)
        case "didStart", "didResume":
            if let index = openSessions[key]?.index, let app = e.text("session") {
                l.sessions[index].id = app
                l.sessions[index].appID = e.text("appId") ?? l.sessions[index].appID
            }
        case "didSuspend":
            l.failures.append(TimelineFailure(time: e.time, kind: "suspended", message: e.body))
        case "didFailToStart", "didEnd":
            let reason = e.text("endReason")
            if let index = openSessions.removeValue(forKey: key)?.index {
                l.sessions[index].end = e.time
                l.sessions[index].endReason = reason
            }
            if let reason {
                l.failures.append(TimelineFailure(time: e.time, kind: event == "didEnd" ? "ended: \(reason)" : "failed to start: \(reason)", message: e.body))
            }
        default:
            break
        }
    }

    /// `daemon 812`, `cli 913`: who ran a session (nil when the records name no process).
    static func process(of e: LogEntry) -> String? {
        guard let pid = e.text("pid") else { return nil }
        return "\(e.text("role") ?? "process") \(pid)"
    }

    /// `state connected → suspended (connection lost: closed by the device)` → the parenthesis.
    static func reason(in body: String) -> String? {
        guard let open = body.firstIndex(of: "("), body.hasSuffix(")") else { return nil }
        return String(body[body.index(after: open)..<body.index(before: body.endIndex)])
    }

    private mutating func traffic(_ e: LogEntry) {
        guard let direction = e.text("direction"), let peer = e.text("peer") else { return }
        let device = endpointToDevice[peer] ?? peer
        guard let id = e.integer("requestId"), id != 0 else { return }
        let connection = "\(e.text("local") ?? "")|\(peer)|\(id)"
        let type = e.text("type") ?? "?"
        if direction == "out" {
            var l = self[lane: device, name: nil]
            pending[connection] = (device, l.requests.count, e.time)
            l.requests.append(TimelineRequest(time: e.time, type: type))
            self[lane: device, name: nil] = l
        } else if let request = pending.removeValue(forKey: connection), var l = lanes[request.lane] {
            l.requests[request.index].latencyMs = Double(e.time - request.time) / 1e6
            if LogStatistics.failureTypes.contains(type) {
                l.requests[request.index].failed = true
                l.requests[request.index].error = type
                l.failures.append(TimelineFailure(time: e.time, kind: "\(l.requests[request.index].type) → \(type)", message: e.body))
            }
            lanes[request.lane] = l
        }
    }

    package func model(title: String, notes: [String] = []) -> TimelineModel {
        // Grouped per site (agent), each site's lanes in the order they first appeared; one site
        // (a single host's logs) is no grouping, and its lanes name no site.
        var all = order.compactMap { lanes[$0] }
        if Set(all.map { $0.site ?? "" }).count <= 1 {
            for i in all.indices { all[i].site = nil }
        }
        let screens = Dictionary(display.devices(until: last, transitions: DisplayReport.transitions).map { ($0.id, $0.intervals) },
                                 uniquingKeysWith: { a, _ in a })
        for i in all.indices { all[i].content = screens[all[i].deviceID] ?? [] }
        let ordered = all.enumerated().sorted { ($0.element.site ?? "", $0.offset) < ($1.element.site ?? "", $1.offset) }
        return TimelineModel(title: title, start: first ?? 0, end: last ?? 0, lanes: ordered.map(\.element), notes: notes)
    }
}
