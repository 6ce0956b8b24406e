import CastCore

/// `castline logs report`: proof of display from the logs alone, built from ``DisplayTimeline``'s
/// intervals per (device, content): a fleet summary (each screen's share of the period shown),
/// totals and play counts per content item, and per screen its intervals (shown, not shown with
/// the cause, not observed). Times in the report's time zone (``LocalClock``); `--json` and
/// `--csv` carry Unix seconds too. Pure.
package struct DisplayReport: Sendable {
    /// One content item over the fleet.
    package struct ContentTotal: Sendable, Equatable {
        package var content: String
        /// Nanoseconds shown, over every screen.
        package var shown: Int64
        /// How often it started showing on a screen (a return after a spell castline could not
        /// observe is the same play).
        package var plays: Int
        package var screens: Int
        package var announcement: Bool
    }

    package let from: Int64
    package let to: Int64
    package let clock: LocalClock
    /// In name order, or the least shown first (`worstFirst`).
    package let devices: [DisplayTimeline.Device]

    /// `since`/`until` bound the period (default: the first and last record).
    /// Intervals shorter than this are transitions (a launch before its first status, the owner
    /// settling: a few milliseconds between records), folded into the next
    /// (``DisplayTimeline/devices(until:transitions:)``).
    package static let transitions: Int64 = 100_000_000

    package init(_ timeline: DisplayTimeline, since: Int64? = nil, until: Int64? = nil, clock: LocalClock, worstFirst: Bool = false,
                transitions: Int64 = DisplayReport.transitions) {
        let from = since ?? timeline.first ?? 0
        let to = max(from, until ?? timeline.last ?? from)
        self.from = from
        self.to = to
        self.clock = clock
        var devices = timeline.devices(until: to, transitions: transitions).map { d -> DisplayTimeline.Device in
            var d = d
            d.intervals = d.intervals.compactMap { i in
                var i = i
                i.from = max(i.from, from)
                i.to = min(i.to, to)
                return i.to > i.from ? i : nil
            }
            return d
        }
        devices.sort { a, b in
            if worstFirst, a.shown != b.shown { return a.shown < b.shown }
            return (a.name.lowercased(), a.id) < (b.name.lowercased(), b.id)
        }
        self.devices = devices
    }

    private init(from: Int64, to: Int64, clock: LocalClock, devices: [DisplayTimeline.Device]) {
        self.from = from
        self.to = to
        self.clock = clock
        self.devices = devices
    }

    /// The same report with only the screens `include` keeps (`--device`).
    package func keeping(_ include: (DisplayTimeline.Device) -> Bool) -> DisplayReport {
        DisplayReport(from: from, to: to, clock: clock, devices: devices.filter(include))
    }

    /// The period in nanoseconds (at least 1).
    var period: Int64 { max(1, to - from) }

    /// Seconds to the millisecond: every figure of `--json` and `--csv` is a sum of these.
    static func seconds(_ nanos: Int64) -> Double { (Double(nanos) / 1e6).rounded() / 1000 }
    static func unix(_ nanos: Int64) -> Double { (Double(nanos) / 1e6).rounded() / 1000 }

    /// Shown seconds as the sum of each interval's rounded length (so CSV sums equal it).
    static func shownSeconds(_ d: DisplayTimeline.Device) -> Double {
        (d.intervals.filter { $0.kind == .shown }.reduce(0.0) { $0 + seconds($1.duration) } * 1000).rounded() / 1000
    }

    func share(_ nanos: Int64) -> Double { (Double(nanos) / Double(period) * 1000).rounded() / 10 }

    /// Per content item: total shown, plays, screens; the longest shown first.
    package var contents: [ContentTotal] {
        var totals: [String: ContentTotal] = [:]
        var screens: [String: Set<String>] = [:]
        for d in devices {
            var previous: String??   // the last observed interval's content when shown (nil: not shown)
            for i in d.intervals {
                if i.kind == .notObserved { continue }
                let content = i.kind == .shown ? i.content : nil
                if let content {
                    var t = totals[content] ?? ContentTotal(content: content, shown: 0, plays: 0, screens: 0, announcement: i.isAnnouncement)
                    t.shown += i.duration
                    if previous != .some(content) { t.plays += 1 }
                    totals[content] = t
                    screens[content, default: []].insert(d.id)
                }
                previous = .some(content)
            }
        }
        return totals.values.map { t in var t = t; t.screens = screens[t.content]?.count ?? 0; return t }
            .sorted { ($1.shown, $0.content) < ($0.shown, $1.content) }
    }

    /// `2026-11-28 06:27:01 to 2026-11-28 06:42:01 (Europe/Berlin, +01:00), 15 min 0 s`.
    package var periodText: String {
        "\(clock.dateTime(from)) to \(clock.dateTime(to)) (\(clock.zone), UTC\(clock.offset(from))), \(Self.length(period))"
    }

    /// `1 h 2 min 3 s`, `4.5 s`.
    static func length(_ nanos: Int64) -> String {
        let s = Double(nanos) / 1e9
        if s < 60 { return "\((s * 10).rounded() / 10) s" }
        let total = Int(s.rounded())
        let h = total / 3600, m = total % 3600 / 60, sec = total % 60
        return (h > 0 ? "\(h) h " : "") + "\(m) min \(sec) s"
    }

    /// `shown`, `not shown (app closed (CC1AD845))`, `announcement`, `not observed (…)`.
    static func label(_ i: DisplayTimeline.Interval) -> String {
        switch i.kind {
        case .shown: return i.isAnnouncement ? "announcement" : "shown"
        case .notShown: return "not shown: \(i.cause ?? "?")"
        case .notObserved: return "not observed: \(i.cause ?? "?")"
        }
    }

    /// What the report cannot see: said in the text and on the page.
    static let countedByApp = "Off, other input and covered come from the TV's HDMI-CEC state (standby, active input) and the model's "
        + "ambient mode; screens that report no CEC state are counted by the app alone (shown while castline's content runs)."

    // MARK: Text

    package var text: String {
        var out = ["proof of display, \(periodText)", Self.countedByApp]
        if devices.isEmpty {
            out.append("  no screen in these records (the daemon's CastSession, RemoteMediaClient, JobDriver and DeviceRegistry records at info)")
            return out.joined(separator: "\n")
        }
        out.append("")
        out.append("fleet: \(devices.count) screen(s)")
        for d in devices {
            let notObserved = d.intervals.filter { $0.kind == .notObserved }.reduce(0) { $0 + $1.duration }
            out.append("  \(d.name): shown \(Self.length(d.shown)), \(share(d.shown)) % of the period"
                       + (notObserved > 0 ? "; not observed \(Self.length(notObserved))" : ""))
        }
        out.append("")
        out.append("content")
        for c in contents {
            out.append("  \(c.content)\(c.announcement ? " (announcement)" : ""): \(Self.length(c.shown)), \(c.plays) play(s) on \(c.screens) screen(s)")
        }
        for d in devices {
            out.append("")
            out.append("\(d.name) (\(d.id)): shown \(Self.length(d.shown)), \(share(d.shown)) % of the period")
            for i in d.intervals {
                out.append("  \(clock.time(i.from))–\(clock.time(i.to))  \(Self.length(i.duration))  \(Self.label(i))"
                           + (i.content.map { "  \($0)" } ?? ""))
            }
        }
        return out.joined(separator: "\n")
    }

    // MARK: JSON

    /// `{"period", "timezone", "devices": [{"device", "deviceName", "shown_seconds", "share",
    /// "intervals": [{"from", "to", "content", "kind", "cause"}]}], "contents": […]}`; times in
    /// Unix seconds.
    package var json: JSONValue {
        func optional(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        var o = JSONObject()
        o.set("period", ["from": .double(Self.unix(from)), "to": .double(Self.unix(to)), "seconds": .double(Self.seconds(period)),
                         "text": .string(periodText)])
        o.set("timezone", .string(clock.zone))
        o.set("devices", .array(devices.map { d in
            ["device": .string(d.id), "deviceName": .string(d.name), "shown_seconds": .double(Self.shownSeconds(d)),
             "share": .double(share(d.shown)),
             "intervals": .array(d.intervals.map { i in
                 ["from": .double(Self.unix(i.from)), "to": .double(Self.unix(i.to)), "seconds": .double(Self.seconds(i.duration)),
                  "content": optional(i.content), "kind": .string(i.kind.rawValue), "cause": optional(i.cause)]
             })]
        }))
        o.set("contents", .array(contents.map { c in
            ["content": .string(c.content), "shown_seconds": .double(Self.seconds(c.shown)), "plays": .int(Int64(c.plays)),
             "screens": .int(Int64(c.screens)), "announcement": .bool(c.announcement)]
        }))
        return .object(o)
    }

    // MARK: CSV

    /// One row per interval (RFC 4180 quoting), local times and Unix seconds both.
    package var csv: String {
        func field(_ s: String) -> String {
            s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + s.replacingAll("\"", with: "\"\"") + "\"" : s
        }
        var rows = ["device,device_name,from,to,from_unix,to_unix,seconds,kind,content,cause"]
        for d in devices {
            for i in d.intervals {
                rows.append([d.id, d.name, clock.dateTime(i.from), clock.dateTime(i.to), "\(Self.unix(i.from))", "\(Self.unix(i.to))",
                             "\(Self.seconds(i.duration))", i.kind.rawValue, i.content ?? "", i.cause ?? ""].map(field).joined(separator: ","))
            }
        }
        return rows.joined(separator: "\r\n") + "\r\n"
    }
}

extension String {
    /// Every `target` replaced by `replacement` (the standard library's without Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
