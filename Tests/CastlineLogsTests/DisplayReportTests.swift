import CastCore
import CastLogging
import CastlineLogs
import Testing

/// The report's intervals per (screen, content) from a scripted run's records: a playlist item,
/// an outage (back-dated to when the device went silent), an announcement, another sender, the
/// app closed, the daemon stopped and started again, a page job's page change.
@Suite struct DisplayReportTests {
    let t0: Int64 = 1_795_000_000_000_000_000

    func at(_ s: Double) -> Int64 { t0 + Int64((s * 1000).rounded()) * 1_000_000 }

    func record(_ s: Double, _ cls: String, _ body: String = "", pid: Int64 = 100, _ fields: JSONObject) -> LogEntry {
        var a = fields
        a.set("pid", .int(pid))
        a.set("role", "daemon")
        return LogEntry(time: at(s), level: .info, className: cls, body: body, attributes: a)
    }

    func event(_ s: Double, _ event: String, device: String = "tv1", pid: Int64 = 100, body: String? = nil, _ extra: JSONObject = [:]) -> LogEntry {
        let name = device == "tv1" ? "Lobby" : "Bar"
        var a: JSONObject = ["device": .string(device), "deviceName": .string(name), "localSession": 1, "event": .string(event)]
        for (k, v) in extra { a.set(k, v) }
        return record(s, "CastSession", body ?? event, pid: pid, a)
    }

    func following(_ s: Double, _ app: String, device: String = "tv1", pid: Int64 = 100) -> LogEntry {
        record(s, "CastSession", "following app \(app)", pid: pid, ["device": .string(device), "appId": .string(app), "session": .string("s-" + app)])
    }

    func stopped(_ s: Double, _ app: String, device: String = "tv1") -> LogEntry {
        record(s, "CastSession", "app \(app) stopped", ["device": .string(device), "appId": .string(app), "change": "stopped"])
    }

    func owner(_ s: Double, _ kind: String, device: String = "tv1", pid: Int64 = 100) -> LogEntry {
        record(s, "DeviceRegistry", "owner", pid: pid, ["device": .string(device), "ownerKind": .string(kind)])
    }

    func display(_ s: Double, _ content: String?, _ playback: String = "playing", device: String = "tv1", pid: Int64 = 100) -> LogEntry {
        var a: JSONObject = ["device": .string(device), "display": "media", "playback": .string(playback)]
        if let content { a.set("content", .string(content)) }
        return record(s, "RemoteMediaClient", "on screen", pid: pid, a)
    }

    func page(_ s: Double, _ state: String, _ url: String, device: String = "tv2") -> LogEntry {
        record(s, "JobDriver", state, ["device": .string(device), "deviceName": "Bar", "page": .string(state), "url": .string(url)])
    }

    var script: [LogEntry] {
        [
            event(0, "willStart"), event(1, "didStart"), following(1.5, "CC1AD845"), owner(1.6, "job"), display(2, "http://m/a.mp4"),
            display(10, "http://m/b.mp4"),                                   // the playlist's next item
            event(20, "didSuspend", body: "didSuspend(connection lost: device silent for 2 s (heartbeat timeout))", ["silentFor": 1.5]),
            event(30, "didResume"),
            owner(40, "announcement"), display(40.2, "http://m/chime.mp3"),
            owner(45, "job"), display(45.1, "http://m/b.mp4"),
            owner(50, "other"), following(50.1, "E8C28D3C"), display(50.2, nil, "none"),
            stopped(60, "E8C28D3C"), owner(60.1, "nobody"),
            event(70, "didEnd", ["endReason": "requested"]),
            // The daemon is stopped; a new one starts 10 s later.
            record(80, "PluginHost", "plugins loaded", pid: 200, [:]),
            event(80.5, "willStart", pid: 200), event(81, "didStart", pid: 200), following(81.2, "CC1AD845", pid: 200),
            owner(81.3, "job", pid: 200), display(82, "http://m/a.mp4", pid: 200),
            // A page job on tv2, its page changed by a reload.
            event(3, "willStart", device: "tv2"), event(4, "didStart", device: "tv2"), following(4.5, "84912283", device: "tv2"),
            owner(4.6, "job", device: "tv2"), page(5, "shown", "http://p/board-1.html"),
            page(25, "gone", "http://p/board-1.html"), page(25.8, "shown", "http://p/board-2.html"),
            record(90, "JobDriver", "kept", pid: 200, ["device": "tv1", "page": "kept"]),
        ].sorted { $0.time < $1.time }
    }

    func timeline() -> DisplayTimeline {
        var t = DisplayTimeline()
        for e in script { t.add(e) }
        return t
    }

    typealias I = DisplayTimeline.Interval

    @Test func eachScreensIntervalsFollowWhatItShowedAndWhyNot() throws {
        let devices = timeline().devices()
        let tv1 = try #require(devices.first { $0.id == "tv1" })
        let expected: [(Double, Double, DisplayTimeline.Kind, String?, String?)] = [
            (0, 1, .notObserved, nil, "castline was not following the device yet"),
            (1, 2, .notShown, nil, "idle"),                                   // linked, nothing playing yet
            (2, 10, .shown, "http://m/a.mp4", nil),
            (10, 18.5, .shown, "http://m/b.mp4", nil),
            (18.5, 30, .notObserved, nil, "the link was down: connection lost: device silent for 2 s (heartbeat timeout)"),
            (30, 40, .shown, "http://m/b.mp4", nil),
            (40, 40.2, .shown, "http://m/b.mp4", "announcement"),
            (40.2, 45, .shown, "http://m/chime.mp3", "announcement"),
            (45, 45.1, .shown, "http://m/chime.mp3", nil),
            (45.1, 50, .shown, "http://m/b.mp4", nil),
            (50, 50.1, .notShown, "http://m/b.mp4", "another sender (app CC1AD845)"),
            (50.1, 50.2, .notShown, "http://m/b.mp4", "another sender (app E8C28D3C)"),
            (50.2, 60, .notShown, "app E8C28D3C", "another sender (app E8C28D3C)"),
            (60, 60.1, .notShown, nil, "another sender"),
            (60.1, 70, .notShown, nil, "app closed (E8C28D3C)"),
            (70, 81, .notObserved, nil, "castline was not running"),   // its records end at 70, the next daemon's begin at 80
            (81, 82, .notShown, nil, "idle"),
            (82, 90, .shown, "http://m/a.mp4", nil),
        ]
        let got = tv1.intervals
        #expect(got.map { "\($0.from)-\($0.to) \($0.kind) \($0.content ?? "-") \($0.cause ?? "-")" }
                == expected.map { "\(at($0.0))-\(at($0.1)) \($0.2) \($0.3 ?? "-") \($0.4 ?? "-")" })
        // Every moment is in exactly one interval: they tile the screen's time.
        for (a, b) in zip(tv1.intervals, tv1.intervals.dropFirst()) { #expect(a.to == b.from) }
        let tv2 = try #require(devices.first { $0.id == "tv2" })
        #expect(tv2.name == "Bar")
        let shown = tv2.intervals.filter { $0.kind == .shown }
        #expect(shown.map(\.content) == ["http://p/board-1.html", "http://p/board-2.html"])
        #expect(shown.map(\.from) == [at(5), at(25.8)] && shown[0].to == at(25))
    }

    @Test func theReportSumsPerScreenAndContentAndItsCSVMatchesItsJSON() throws {
        let report = DisplayReport(timeline(), clock: try LocalClock(zone: "UTC"), transitions: 0)
        #expect(report.devices.map(\.name) == ["Bar", "Lobby"], "in name order")
        let worst = DisplayReport(timeline(), clock: try LocalClock(zone: "UTC"), worstFirst: true, transitions: 0)
        #expect(worst.devices.map(\.name) == ["Lobby", "Bar"], "the least shown first")
        let a = try #require(report.contents.first { $0.content == "http://m/a.mp4" })
        #expect(a.plays == 2 && a.shown == at(10) - at(2) + at(90) - at(82) && a.screens == 1)
        let b = try #require(report.contents.first { $0.content == "http://m/b.mp4" })
        #expect(b.plays == 2, "back after an outage is the same play; after the announcement a new one")
        #expect(report.contents.first { $0.content == "http://m/chime.mp3" }?.announcement == true)
        let json = report.json
        let lobby = try #require(json["devices"]?.array?.first { $0["device"] == "tv1" })
        let intervals = try #require(lobby["intervals"]?.array)
        #expect(intervals.first?["from"]?.double == Double(at(0) / 1_000_000) / 1000 && intervals.first?["kind"] == "not_observed")
        let shownSeconds = try #require(lobby["shown_seconds"]?.double)
        #expect(abs(shownSeconds - (8 + 8.5 + 10 + 0.2 + 4.8 + 0.1 + 4.9 + 8)) < 0.0005)
        // The CSV: one row per interval, and its shown seconds per screen add up to the JSON's.
        let rows = report.csv.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.first == ["device", "device_name", "from", "to", "from_unix", "to_unix", "seconds", "kind", "content", "cause"])
        #expect(rows.count - 1 == report.devices.reduce(0) { $0 + $1.intervals.count })
        for d in try #require(json["devices"]?.array) {
            let csvShown = rows.dropFirst().filter { $0[0] == d["device"]?.string && $0[7] == "shown" }.compactMap { Double($0[6]) }.reduce(0, +)
            #expect(abs(csvShown - (d["shown_seconds"]?.double ?? -1)) < 0.0005, "\(d["device"]!)")
        }
        #expect(rows[1][0] == "tv2" && rows[1][2] == report.clock.dateTime(at(3)) && rows[1][4] == "\(Double(at(3) / 1_000_000) / 1000)")
        let text = report.text
        #expect(text.contains("fleet: 2 screen(s)") && text.contains("(UTC, UTC+00:00)") && text.contains("plays") == false)
        #expect(text.contains("http://m/b.mp4: ") && text.contains("2 play(s) on 1 screen(s)"), "\(text)")
        let html = report.html
        #expect(html.contains("<table id=\"fleet\"") && html.contains("class=\"announcement\"") && html.contains("class=\"axis\""))
    }

    @Test func transitionsShorterThanASecondFoldIntoTheNextInterval() throws {
        let tv1 = try #require(timeline().devices(transitions: 1_000_000_000).first { $0.id == "tv1" })
        #expect(tv1.intervals.map { "\(($0.from - t0) / 1_000_000) \($0.kind) \($0.content ?? "-")" } == [
            "0 notObserved -", "1000 notShown -", "2000 shown http://m/a.mp4", "10000 shown http://m/b.mp4", "18500 notObserved -",
            "30000 shown http://m/b.mp4", "40000 shown http://m/chime.mp3", "45000 shown http://m/b.mp4", "50000 notShown app E8C28D3C",
            "60000 notShown -", "70000 notObserved -", "81000 notShown -", "82000 shown http://m/a.mp4",
        ])
        #expect(tv1.intervals[6].cause == "announcement" && tv1.intervals[6].to == at(45), "the announcement begins at the owner's change")
        #expect(tv1.intervals[9].cause == "app closed (E8C28D3C)" && tv1.intervals[9].from == at(60))
        for (a, b) in zip(tv1.intervals, tv1.intervals.dropFirst()) { #expect(a.to == b.from) }
        #expect(DisplayReport(timeline(), clock: try LocalClock(zone: "UTC")).contents.first { $0.content == "http://m/b.mp4" }?.plays == 2)
    }

    @Test func statsSumsEachScreensTimePerContentNotToTheLastURL() throws {
        var stats = LogStatistics()
        for e in script { stats.add(e) }
        let lobby = try #require(stats.json(read: LogReadReport())["display"]?.array?.first { $0["device"] == "tv1" })
        // a: 2-10 and 82-90; b: 10-18.5, 30-40, 45.1-50 (the outage and the announcement apart).
        #expect(lobby["shown"]?["http://m/a.mp4"] == .double(16) && lobby["shown"]?["http://m/b.mp4"] == .double(23.4))
        #expect(lobby["shown"]?["http://m/chime.mp3 (announcement)"] == .double(4.8))
        #expect(lobby["notObserved_s"] == .double(1 + 11.5 + 11) && lobby["notShown_s"] == .double(1 + 20 + 1))
        // The page job's TV: each page its own time (board-2 until the daemon stopped at 70).
        let bar = try #require(stats.json(read: LogReadReport())["display"]?.array?.first { $0["device"] == "tv2" })
        #expect(bar["shown"]?["http://p/board-1.html"] == .double(20) && bar["shown"]?["http://p/board-2.html"] == .double(44.2))
        #expect(stats.text(read: LogReadReport()).contains("  Lobby: http://m/a.mp4 16.0 s, http://m/b.mp4 23.4 s, "))
    }

    /// A `screen` record as `DeviceRegistry` logs it (`visible` as text, `reason`, `source`).
    func screen(_ s: Double, _ visible: String, _ reason: String = "", device: String = "tv1") -> LogEntry {
        record(s, "DeviceRegistry", "Lobby: screen", ["device": .string(device), "visible": .string(visible), "reason": .string(reason),
                                                       "source": .string(visible == "unknown" ? "" : "device")])
    }

    @Test func aScreenKnownNotToShowTheAppIsNotShownWithItsCauseAndUnknownChangesNothing() throws {
        let entries = [
            event(0, "willStart"), event(1, "didStart"), following(1.5, "CC1AD845"), owner(1.6, "job"), display(2, "http://m/a.mp4"),
            screen(2.5, "true"),
            screen(10, "false", "standby"), screen(20, "true"),
            screen(30, "false", "other-input"), screen(35, "unknown"),          // castline cannot tell: counted by the app
            screen(40, "false", "covered"), display(45, "http://m/b.mp4"),       // still covered: the new item is not shown
            screen(50, "false", "idle-screen"),                                   // the app's own records say what shows
            stopped(55, "CC1AD845"), screen(60, "false", "standby"),
            event(70, "didEnd", ["endReason": "requested"]),
            // The next session learns the screen afresh: the old standby does not carry over.
            event(80, "willStart"), event(81, "didStart"), following(81.2, "CC1AD845"), owner(81.3, "job"), display(82, "http://m/a.mp4"),
            record(90, "JobDriver", "kept", ["device": "tv1", "page": "kept"]),
        ]
        var t = DisplayTimeline()
        for e in entries { t.add(e) }
        let tv1 = try #require(t.devices().first)
        let expected: [(Double, Double, DisplayTimeline.Kind, String?, String?)] = [
            (0, 1, .notObserved, nil, "castline was not following the device yet"),
            (1, 2, .notShown, nil, "idle"),
            (2, 10, .shown, "http://m/a.mp4", nil),
            (10, 20, .notShown, "http://m/a.mp4", "off"),
            (20, 30, .shown, "http://m/a.mp4", nil),
            (30, 35, .notShown, "http://m/a.mp4", "other input"),
            (35, 40, .shown, "http://m/a.mp4", nil),
            (40, 45, .notShown, "http://m/a.mp4", "covered"),
            (45, 50, .notShown, "http://m/b.mp4", "covered"),
            (50, 55, .shown, "http://m/b.mp4", nil),
            (55, 60, .notShown, nil, "app closed (CC1AD845)"),
            (60, 70, .notShown, nil, "off"),
            (70, 80, .notObserved, nil, "castline stopped following the device"),
            (80, 81, .notObserved, nil, "castline was not following the device yet"),
            (81, 82, .notShown, nil, "idle"),                                   // not "off": the old standby is gone
            (82, 90, .shown, "http://m/a.mp4", nil),
        ]
        #expect(tv1.intervals.map { "\($0.from)-\($0.to) \($0.kind) \($0.content ?? "-") \($0.cause ?? "-")" }
                == expected.map { "\(at($0.0))-\(at($0.1)) \($0.2) \($0.3 ?? "-") \($0.4 ?? "-")" })
        let report = DisplayReport(t, clock: try LocalClock(zone: "UTC"), transitions: 0)
        #expect(report.contents.first { $0.content == "http://m/a.mp4" }?.shown == at(10) - at(2) + at(30) - at(20) + at(40) - at(35) + at(90) - at(82))
        #expect(report.text.contains("counted by the app alone") && report.html.contains("id=\"counted-by-app\""))
    }

    @Test func localTimesFollowTheZone() throws {
        let utc = try LocalClock(zone: "UTC")
        #expect(utc.dateTime(1_795_000_000_000_000_000) == "2026-11-18 11:06:40" && utc.offset(0) == "+00:00")
        let berlin = try LocalClock(zone: "Europe/Berlin")
        #expect(berlin.dateTime(1_795_000_000_000_000_000) == "2026-11-18 12:06:40" && berlin.offset(1_795_000_000_000_000_000) == "+01:00")
        #expect(berlin.offset(1_785_000_000_000_000_000) == "+02:00", "summer time")
        #expect(throws: LocalClock.UnknownZone.self) { try LocalClock(zone: "Mars/Olympus") }
        #expect(throws: LocalClock.UnknownZone.self) { try LocalClock(zone: "../../etc/passwd") }
    }
}
