import CastCore
import CastLogging
import CastlineLogs
import Testing

/// A media or page server found down (`ServerProbe` records): `stats` lists it as its own cause
/// by `scheme://host:port`, a page's open gap names it, and the timeline's story shows it.
@Suite struct ServerDownTests {
    let t0: Int64 = 1_795_000_000_000_000_000

    func at(_ s: Double) -> Int64 { t0 + Int64(s * 1e9) }

    func record(_ s: Double, _ cls: String, _ body: String, level: LogLevel = .info, _ fields: JSONObject) -> LogEntry {
        var a = fields
        a.set("pid", 100)
        a.set("role", "daemon")
        return LogEntry(time: at(s), level: level, className: cls, body: body, attributes: a)
    }

    func down(_ s: Double, _ device: String, _ server: String, reason: String = "connection refused") -> LogEntry {
        record(s, "ServerProbe", "\(server) is down", level: .warning, [
            "device": .string(device), "deviceName": .string(device == "tv1" ? "Lobby" : "Bar"), "server": .string(server),
            "serverDown": .string(server), "url": .string(server + "/board.html"), "reachable": false, "reason": .string(reason), "probe": "preflight",
        ])
    }

    var entries: [LogEntry] {
        [
            record(1, "JobDriver", "shown", ["device": "tv1", "deviceName": "Lobby", "page": "shown", "url": "http://10.0.0.5:8000/board.html"]),
            record(10, "JobDriver", "gone", ["device": "tv1", "deviceName": "Lobby", "page": "gone", "reason": "the receiver app was stopped"]),
            down(11, "tv1", "http://10.0.0.5:8000"),
            down(40, "tv1", "http://10.0.0.5:8000"),
            down(41, "tv2", "http://10.0.0.5:8000", reason: "HTTP 503"),
            down(42, "tv2", "https://media.example:443"),
            // A reachable server is no cause.
            record(43, "ServerProbe", "answers HTTP 200", ["device": "tv2", "server": "http://10.0.0.6:80", "reachable": true]),
        ]
    }

    @Test func statsListsEachServerDownApartAndTheGapNamesIt() throws {
        var stats = LogStatistics()
        for e in entries { stats.add(e) }
        #expect(stats.serversDown.keys.sorted() == ["http://10.0.0.5:8000", "https://media.example:443"])
        let local = try #require(stats.serversDown["http://10.0.0.5:8000"])
        #expect(local.count == 3 && local.devices == ["Lobby", "Bar"] && local.reason == "HTTP 503")
        let gap = try #require(stats.screenReport.first?.gaps.first)
        #expect(gap.reason == "the receiver app was stopped; the server is down: http://10.0.0.5:8000", "named once, not per probe")
        let json = stats.json(read: LogReadReport())
        let listed = try #require(json["serversDown"]?.array)
        #expect(listed.map { $0["server"]?.string } == ["http://10.0.0.5:8000", "https://media.example:443"])
        #expect(listed.first?["count"] == 3 && listed.first?["devices"] == ["Bar", "Lobby"])
        let text = stats.text(read: LogReadReport())
        #expect(text.contains("media or page servers down") && text.contains("  http://10.0.0.5:8000: 3 (Bar, Lobby): HTTP 503"), "\(text)")
    }

    @Test func theTimelineShowsTheServerAsTheCause() throws {
        var builder = TimelineBuilder()
        for e in entries { builder.add(e) }
        let lanes = builder.model(title: "t").lanes
        let lobby = try #require(lanes.first { $0.deviceID == "tv1" })
        let events = lobby.story.filter { $0.kind == .server }
        #expect(events.map(\.text) == ["server down: http://10.0.0.5:8000 (connection refused)", "server down: http://10.0.0.5:8000 (connection refused)"])
        #expect(lanes.first { $0.deviceID == "tv2" }?.story.filter { $0.kind == .server }.count == 2, "the reachable one is not in the story")
    }
}
