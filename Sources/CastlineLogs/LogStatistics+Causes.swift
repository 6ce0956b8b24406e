import CastCore
import CastLogging

/// Why apps stopped, from a following session's records (``LogStatistics/StopCause``): feed
/// every record; a stop comes back with its cause. Shared by `stats` and `timeline`. Pure.
struct AppStopClassifier: Sendable {
    /// How long before an app's end castline's own STOP counts as its cause.
    static let ownStopWindow: Int64 = 10_000_000_000
    /// Per device: the app castline asked to stop, and when (its own stops).
    private var asked: [String: (app: String, time: Int64)] = [:]
    /// Per device: what its media showed (`playback` of the last `display: media` record).
    private var playback: [String: String] = [:]

    mutating func note(_ e: LogEntry) -> (device: String, app: String, cause: String)? {
        guard let device = e.text("device") else { return nil }
        if e.text("display") == "media", let state = e.text("playback") {
            playback[device] = state
            return nil
        }
        guard e.className == "CastSession", let change = e.text("change"), let app = e.text("appId") else { return nil }
        if change == "stopping" {
            asked[device] = (app, e.time)
            return nil
        }
        guard change == "stopped" else { return nil }
        if let own = asked[device], own.app == app, e.time - own.time <= Self.ownStopWindow {
            asked[device] = nil
            return (device, app, LogStatistics.StopCause.castline)
        }
        let showing = playback[device] == "playing" || playback[device] == "paused"
        playback[device] = nil
        return (device, app, showing ? LogStatistics.StopCause.onDevice : LogStatistics.StopCause.idle)
    }
}

/// Causes kept apart: who stopped an app, and each plugin failure by plugin, problem and device.
extension LogStatistics {
    /// One kind of plugin failure: the plugin, the problem (`crash (SIGSEGV)`, `hang`, `limit
    /// (memory)`, `refused send`, a load-time refusal's kind) and the device ("" when the record
    /// names none: a helper's crash is the process's, and its channels' devices each get an
    /// `unavailable` record, not counted again).
    package struct PluginFailureKey: Hashable, Sendable, Comparable {
        package var plugin: String
        package var problem: String
        package var device: String

        package init(plugin: String, problem: String, device: String) {
            self.plugin = plugin
            self.problem = problem
            self.device = device
        }

        package static func < (a: Self, b: Self) -> Bool { (a.plugin, a.problem, a.device) < (b.plugin, b.problem, b.device) }
    }

    /// Why an app stopped, as far as castline can tell from its own records.
    package enum StopCause {
        /// castline asked (a following session's STOP, `stopping` shortly before).
        package static let castline = "stopped by castline"
        /// The device closed an app that showed no media (an idle timeout: the field profiles'
        /// idle close, a page app without media on a Nest Hub).
        package static let idle = "closed by the device: no media shown (idle timeout)"
        /// The app went while its media played or was paused: another sender's STOP or the app
        /// ended (a crash); the protocol does not say which.
        package static let onDevice = "stopped on the device while showing media (another sender, or the app ended)"
    }

    /// A warning or error with a `problem`, from a plugin's host side: counted once per event
    /// (a refused send's report counts the refusals it stands for).
    mutating func pluginFailure(_ e: LogEntry) {
        guard let raw = e.text("problem"), e.text("event") == nil else { return }
        var plugin = e.text("plugin") ?? ""
        if plugin.isEmpty { plugin = e.text("path").map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "?" }
        let problem: String
        switch raw {
        case "crashed": problem = "crash" + (e.text("signal").flatMap { $0.isEmpty ? nil : " (\($0))" } ?? "")
        case "timed_out": problem = "hang"
        case "limit": problem = "limit" + (e.text("limit").map { " (\($0))" } ?? "")
        case "refused": problem = "refused send"
        default: problem = raw
        }
        let count = raw == "refused" ? 1 + Int(e.integer("suppressed") ?? 0) : 1
        pluginFailures[PluginFailureKey(plugin: plugin, problem: problem, device: e.text("device") ?? ""), default: 0] += count
    }

    /// A media or page server found down: how often, the devices that could not show its
    /// content, the last reason.
    package struct ServerDown: Sendable, Equatable {
        package var count = 0
        package var devices: Set<String> = []
        package var reason = ""
    }

    mutating func serverDown(_ e: LogEntry, _ server: String) {
        var s = serversDown[server] ?? ServerDown()
        s.count += 1
        if let device = e.text("deviceName") ?? e.text("device") { s.devices.insert(device) }
        s.reason = e.text("reason") ?? s.reason
        serversDown[server] = s
    }

    /// Plugin failures per plugin and problem, all devices together.
    package var pluginFailuresByProblem: [String: [String: Int]] {
        var result: [String: [String: Int]] = [:]
        for (key, count) in pluginFailures { result[key.plugin, default: [:]][key.problem, default: 0] += count }
        return result
    }

    /// Per screen: seconds shown per content, not shown and not observed (transitions folded).
    var displaySummary: [(device: DisplayTimeline.Device, shown: [(String, Double)], notShown: Double, notObserved: Double)] {
        display.devices(until: last, transitions: DisplayReport.transitions).map { d in
            var byContent: [String: Int64] = [:]
            var order: [String] = []
            var notShown: Int64 = 0, notObserved: Int64 = 0
            for i in d.intervals {
                switch i.kind {
                case .shown:
                    let content = (i.content ?? "?") + (i.isAnnouncement ? " (announcement)" : "")
                    if byContent[content] == nil { order.append(content) }
                    byContent[content, default: 0] += i.duration
                case .notShown: notShown += i.duration
                case .notObserved: notObserved += i.duration
                }
            }
            return (d, order.map { ($0, DisplayReport.seconds(byContent[$0]!)) }, DisplayReport.seconds(notShown), DisplayReport.seconds(notObserved))
        }
    }

    var displayJSON: JSONValue {
        .array(displaySummary.map { s in
            ["device": .string(s.device.id), "deviceName": .string(s.device.name),
             "shown": .object(JSONObject(s.shown.map { ($0.0, JSONValue.double($0.1)) })),
             "notShown_s": .double(s.notShown), "notObserved_s": .double(s.notObserved)]
        })
    }

    var displayText: [String] {
        let summary = displaySummary
        guard !summary.isEmpty else { return [] }
        var out = ["", "on the screens (shown per content; castline logs report has every interval)"]
        for s in summary {
            let shown = s.shown.map { "\($0.0) \($0.1) s" }.joined(separator: ", ")
            out.append("  \(s.device.name): " + (shown.isEmpty ? "nothing shown" : shown)
                       + "; not shown \(s.notShown) s; not observed \(s.notObserved) s")
        }
        return out
    }

    var causesJSON: (plugins: JSONValue, stops: JSONValue) {
        let plugins = JSONValue.array(pluginFailures.keys.sorted().map { key in
            ["plugin": .string(key.plugin), "problem": .string(key.problem), "device": key.device.isEmpty ? .null : .string(key.device),
             "count": .int(Int64(pluginFailures[key]!))]
        })
        let stops = JSONValue.object(JSONObject(appStops.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int(Int64($0.value))) }))
        return (plugins, stops)
    }

    var serversDownJSON: JSONValue {
        .array(serversDown.sorted { $0.key < $1.key }.map { server, s in
            ["server": .string(server), "count": .int(Int64(s.count)), "devices": .array(s.devices.sorted().map { .string($0) }),
             "reason": .string(s.reason)]
        })
    }

    var causesText: [String] {
        var out: [String] = []
        if !appStops.isEmpty {
            out.append("")
            out.append("app stops, by cause")
            for (cause, n) in appStops.sorted(by: { $0.key < $1.key }) { out.append("  \(cause): \(n)") }
        }
        if !serversDown.isEmpty {
            out.append("")
            out.append("media or page servers down (server: times found down; the devices; the last reason)")
            for (server, s) in serversDown.sorted(by: { $0.key < $1.key }) {
                out.append("  \(server): \(s.count) (\(s.devices.sorted().joined(separator: ", "))): \(s.reason)")
            }
        }
        if !pluginFailures.isEmpty {
            out.append("")
            out.append("plugin failures (plugin, problem: count; per device where the record names one)")
            for (plugin, problems) in pluginFailuresByProblem.sorted(by: { $0.key < $1.key }) {
                for (problem, n) in problems.sorted(by: { $0.key < $1.key }) {
                    let devices = pluginFailures.filter { $0.key.plugin == plugin && $0.key.problem == problem && !$0.key.device.isEmpty }
                        .sorted { $0.key.device < $1.key.device }.map { "\($0.key.device) \($0.value)" }
                    out.append("  \(plugin), \(problem): \(n)" + (devices.isEmpty ? "" : " (" + devices.joined(separator: ", ") + ")"))
                }
            }
        }
        return out
    }
}
