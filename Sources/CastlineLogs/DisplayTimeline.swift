import CastCore
import CastLogging

/// What each screen showed, from castline's records, as one interval per (device, content):
/// `shown` (castline's content on the screen, an announcement labelled as one), `not_shown`
/// with its cause (idle, app closed, another sender), or `not_observed` (the link was down, or
/// castline was not running): never counted as shown or as dark. Pure; feed records in log
/// order with ``add(_:)``, read ``devices(until:)``.
///
/// What it reads (the daemon's records; a CLI command's, `role: cli`, are not the screen's story):
/// - `CastSession` events of the following session: connected (`didStart`, `didResume`) or not
///   (`didSuspend`, back-dated by `silentFor`; `didEnd`); the app it follows (`following app`,
///   `appId`) and the app's end (`change: stopped`).
/// - `RemoteMediaClient` `display: media` records: the content and whether it plays.
/// - `JobDriver` `page: shown | gone` records: a page job's URL (a page reports no media).
/// - `DeviceRegistry` owner records (`ownerKind`: job, command, announcement, other, nobody) and
///   screen records (`visible`, `reason`: the TV in standby, on another input, covered by ambient
///   mode): while a screen is known not to show the app, what it would show is `not_shown` with
///   the cause `off`, `other input` or `covered`. A screen that reports none of this (`visible`
///   unknown: no HDMI-CEC) is counted by its app alone.
/// - Processes: a new daemon (`pid`, `role: daemon`) after an old one means castline was not
///   running in between, whatever the old one left open.
package struct DisplayTimeline: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        case shown
        case notShown = "not_shown"
        case notObserved = "not_observed"
    }

    package struct Interval: Sendable, Equatable {
        /// Unix nanoseconds.
        package var from: Int64
        package var to: Int64
        package var kind: Kind
        /// The content (a media URL or id, a page URL, `app <id>` for another sender's app
        /// without media); nil when nothing shows or nothing is known.
        package var content: String?
        /// Why it is not shown or not observed; `announcement` for castline's announcement.
        package var cause: String?

        package init(from: Int64, to: Int64, kind: Kind, content: String? = nil, cause: String? = nil) {
            self.from = from
            self.to = to
            self.kind = kind
            self.content = content
            self.cause = cause
        }

        package var isAnnouncement: Bool { kind == .shown && cause == Self.announcement }
        package var duration: Int64 { to - from }
        package static let announcement = "announcement"
    }

    package struct Device: Sendable, Equatable {
        package var id: String
        package var name: String
        package var intervals: [Interval]

        /// Nanoseconds shown (announcements included).
        package var shown: Int64 { intervals.filter { $0.kind == .shown }.reduce(0) { $0 + $1.duration } }
        /// Nanoseconds observed (shown or not shown).
        package var observed: Int64 { intervals.filter { $0.kind != .notObserved }.reduce(0) { $0 + $1.duration } }
    }

    /// What castline knows of one screen now.
    struct Screen: Sendable {
        var name: String
        var linked = false
        var unlinkedCause = Cause.notYetFollowed
        var app: String?
        var appClosed: String?
        var media: (content: String?, playback: String)?
        var page: String?
        var ownerKind: String?
        /// Why the screen does not show the app, as the daemon read it (``ScreenCause``); nil: it
        /// does, or castline cannot tell.
        var hidden: String?
        /// The process whose session links it (its pid as text).
        var process: String?
        var open: Interval?
        var intervals: [Interval] = []
    }

    enum Cause {
        static let notYetFollowed = "castline was not following the device yet"
        static let notRunning = "castline was not running"
        static let stoppedFollowing = "castline stopped following the device"
    }

    /// The cause of a screen known not to show the app, from a `screen` record's `reason`
    /// (``ScreenReading``'s): nil for the idle screen (no app runs: the app's own records say
    /// idle or app closed) and for what is not known.
    package enum ScreenCause {
        package static let off = "off"
        package static let otherInput = "other input"
        package static let covered = "covered"

        static func of(visible: String?, reason: String?) -> String? {
            guard visible == "false" else { return nil }
            switch reason {
            case "standby"?: return off
            case "other-input"?: return otherInput
            case "covered"?: return covered
            default: return nil
            }
        }
    }

    private var screens: [String: Screen] = [:]
    private var order: [String] = []
    private var lastByProcess: [String: (role: String?, last: Int64)] = [:]
    package private(set) var first: Int64?
    package private(set) var last: Int64?

    package init() {}

    package mutating func add(_ e: LogEntry) {
        first = min(first ?? e.time, e.time)
        last = max(last ?? e.time, e.time)
        let role = e.text("role")
        if role == "cli" || role == "plugin-helper" { return }
        noteProcess(e, role: role)
        guard let device = e.text("device") else { return }
        switch e.className {
        case "CastSession": session(e, device)
        case "RemoteMediaClient":
            guard e.text("display") == "media", let playback = e.text("playback") else { return }
            update(device, at: e.time, name: nil) { s in
                s.media = playback == "none" ? nil : (e.text("content"), playback)
            }
        case "JobDriver":
            guard let page = e.text("page"), page != "kept" else { return }
            update(device, at: e.time, name: e.text("deviceName")) { s in s.page = page == "shown" ? e.text("url") : nil }
        case "DeviceRegistry":
            if let kind = e.text("ownerKind") {
                update(device, at: e.time, name: nil) { s in s.ownerKind = kind }
            } else if let visible = e.text("visible") {
                let hidden = ScreenCause.of(visible: visible, reason: e.text("reason"))
                update(device, at: e.time, name: nil) { s in s.hidden = hidden }
            }
        default:
            break
        }
    }

    /// A new daemon: every screen the old one followed was unobserved from its last record.
    private mutating func noteProcess(_ e: LogEntry, role: String?) {
        guard let pid = e.text("pid") else { return }
        if lastByProcess[pid] == nil, role == "daemon" {
            for (old, info) in lastByProcess where old != pid && info.role == "daemon" {
                for id in order where screens[id]?.process == old {
                    update(id, at: info.last, name: nil) { s in
                        s.linked = false
                        s.unlinkedCause = Cause.notRunning
                        s.process = nil
                    }
                }
                // Screens the old one let go of on its way out (`didEnd`): it was not running since.
                for id in order where screens[id]?.linked == false && screens[id]?.unlinkedCause == Cause.stoppedFollowing {
                    screens[id]?.unlinkedCause = Cause.notRunning
                    screens[id]?.open?.cause = Cause.notRunning
                }
            }
        }
        lastByProcess[pid] = (role ?? lastByProcess[pid]?.role, e.time)
    }

    private mutating func session(_ e: LogEntry, _ device: String) {
        let name = e.text("deviceName")
        if let event = e.text("event") {
            switch event {
            case "willStart":
                // A new session (a new daemon's, or after the last one ended): what the device
                // shows is learnt afresh.
                update(device, at: e.time, name: name) { s in
                    s.linked = false
                    if s.unlinkedCause != Cause.notRunning { s.unlinkedCause = Cause.notYetFollowed }
                    s.app = nil
                    s.appClosed = nil
                    s.media = nil
                    s.ownerKind = nil
                    s.hidden = nil
                }
            case "didStart", "didResume":
                update(device, at: e.time, name: name) { s in
                    s.linked = true
                    s.process = e.text("pid")
                }
            case "didSuspend":
                // Castline last heard from the device `silentFor` seconds before it gave up waiting.
                let silent = e.attributes["silentFor"]?.double ?? 0
                let at = e.time - Int64(max(0, silent) * 1e9)
                let reason = e.body.hasPrefix("didSuspend(") ? String(e.body.dropFirst("didSuspend(".count).dropLast()) : e.body
                update(device, at: at, name: name) { s in
                    s.linked = false
                    s.unlinkedCause = "the link was down: \(reason)"
                }
            case "didEnd", "didFailToStart":
                let reason = e.text("endReason")
                update(device, at: e.time, name: name) { s in
                    s.linked = false
                    s.unlinkedCause = reason == nil || reason == "requested" ? Cause.stoppedFollowing : "the link was lost: \(reason!)"
                    s.app = nil
                    s.media = nil
                }
            default:
                break
            }
            return
        }
        guard let app = e.text("appId") else { return }
        switch e.text("change") {
        case "stopped"?:
            update(device, at: e.time, name: name) { s in
                s.app = nil
                s.appClosed = "app closed (\(app))"
                s.media = nil
                s.page = nil
            }
        case nil where e.text("session") != nil:
            // `following app X session Y`: the app the screen runs now.
            update(device, at: e.time, name: name) { s in
                s.app = app
                s.appClosed = nil
            }
        default:
            break
        }
    }

    /// Applies a change to a screen at `time` and cuts its interval where what it shows changed.
    private mutating func update(_ id: String, at time: Int64, name: String?, _ change: (inout Screen) -> Void) {
        var s = screens[id] ?? Screen(name: name ?? id)
        if screens[id] == nil { order.append(id) }
        if let name, s.name == id { s.name = name }
        change(&s)
        let now = Self.classify(s)
        let at = max(time, s.open?.from ?? time)
        if var open = s.open {
            if open.kind != now.kind || open.content != now.content || open.cause != now.cause {
                open.to = at
                if open.to > open.from { s.intervals.append(open) }
                s.open = Interval(from: at, to: at, kind: now.kind, content: now.content, cause: now.cause)
            }
        } else {
            s.open = Interval(from: at, to: at, kind: now.kind, content: now.content, cause: now.cause)
        }
        screens[id] = s
    }

    /// What a screen in this state shows: what the app shows, unless the screen is known not to
    /// show the app (then that content, not shown, with the screen's cause).
    static func classify(_ s: Screen) -> (kind: Kind, content: String?, cause: String?) {
        guard s.linked else { return (.notObserved, nil, s.unlinkedCause) }
        let app = classifyApp(s)
        if let hidden = s.hidden { return (.notShown, app.content, hidden) }
        return app
    }

    /// What the app on a linked screen shows.
    private static func classifyApp(_ s: Screen) -> (kind: Kind, content: String?, cause: String?) {
        let playing = s.media.flatMap { $0.playback == "playing" || $0.playback == "paused" ? $0.content : nil }
        if s.ownerKind == "other" {
            return (.notShown, playing ?? s.app.map { "app \($0)" }, "another sender" + (s.app.map { " (app \($0))" } ?? ""))
        }
        guard s.app != nil else { return (.notShown, nil, s.appClosed ?? "idle") }
        let ours = s.ownerKind == "job" || s.ownerKind == "command" || s.ownerKind == "announcement"
        if let content = playing ?? (ours && s.media == nil ? s.page : nil) {
            return (.shown, content, s.ownerKind == "announcement" ? Interval.announcement : nil)
        }
        if let media = s.media { return (.notShown, media.content, "idle: media \(media.playback)") }
        return (.notShown, nil, "idle")
    }

    /// Every screen's intervals up to `end` (the last record by default), in the order first seen.
    /// `transitions`: intervals shorter than this (a launch before its first status, the owner
    /// settling) are folded into the next one (the last into the one before), and neighbours
    /// that then say the same are joined; 0 keeps every interval.
    package func devices(until end: Int64? = nil, transitions: Int64 = 0) -> [Device] {
        rawDevices(until: end).map { d in
            guard transitions > 0 else { return d }
            var d = d
            d.intervals = Self.folded(d.intervals, below: transitions)
            return d
        }
    }

    /// Short intervals folded into their neighbours; equal neighbours joined. Bounded: one pass each.
    static func folded(_ intervals: [Interval], below minimum: Int64) -> [Interval] {
        var out: [Interval] = []
        var pendingFrom: Int64?
        for (n, i) in intervals.enumerated() {
            var i = i
            if let from = pendingFrom { i.from = from }
            if i.duration < minimum, n < intervals.count - 1 {
                pendingFrom = i.from
                continue
            }
            pendingFrom = nil
            if i.duration < minimum, let last = out.indices.last {
                out[last].to = i.to
                continue
            }
            if let last = out.indices.last, out[last].kind == i.kind, out[last].content == i.content, out[last].cause == i.cause {
                out[last].to = i.to
            } else {
                out.append(i)
            }
        }
        return out
    }

    private func rawDevices(until end: Int64?) -> [Device] {
        let stop = end ?? last ?? 0
        return order.compactMap { id in
            guard let s = screens[id] else { return nil }
            var intervals = s.intervals.filter { $0.from < stop }.map { i in var i = i; i.to = min(i.to, stop); return i }
            if var open = s.open, open.from < stop {
                open.to = stop
                intervals.append(open)
            }
            return Device(id: id, name: s.name, intervals: intervals)
        }
    }
}
