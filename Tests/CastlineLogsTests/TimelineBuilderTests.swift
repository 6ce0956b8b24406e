import CastCore
import CastLogging
import CastlineLogs
import Testing

/// One log, several processes: a daemon, a CLI command asked to write to the same sinks, and a
/// daemon restarted. Sessions pair within their process; the lanes stay one per device.
@Suite struct TimelineBuilderTests {
    let t0: Int64 = 1_795_000_000_000_000_000

    func at(_ s: Double) -> Int64 { t0 + Int64(s * 1e9) }

    func session(_ s: Double, _ event: String, device: String, local: Int, pid: Int64, role: String,
                 endpoint: String = "127.0.0.1:8009", app: String? = nil) -> LogEntry {
        var a: JSONObject = ["device": .string(device), "deviceName": .string(device == endpoint ? endpoint : "Lobby TV"),
                             "endpoint": .string(endpoint), "localSession": .int(Int64(local)), "event": .string(event),
                             "pid": .int(pid), "role": .string(role)]
        if let app { a.set("session", .string(app)) }
        if event == "didEnd" { a.set("endReason", "requested") }
        return LogEntry(time: at(s), level: .info, className: "CastSession", body: event, attributes: a)
    }

    @Test func aCLISessionBesideTheDaemonsJoinsItsLaneAndPairsApart() throws {
        var builder = TimelineBuilder()
        let entries = [
            session(0, "willStart", device: "uuid-1", local: 1, pid: 100, role: "daemon"),
            session(1, "didStart", device: "uuid-1", local: 1, pid: 100, role: "daemon", app: "app-daemon"),
            // `castline cast --direct` knows the TV by its address; its session is #1 in its own process.
            session(2, "willStart", device: "127.0.0.1:8009", local: 1, pid: 200, role: "cli"),
            session(3, "didStart", device: "127.0.0.1:8009", local: 1, pid: 200, role: "cli", app: "app-cli"),
            session(4, "didEnd", device: "127.0.0.1:8009", local: 1, pid: 200, role: "cli"),
        ]
        for e in entries { builder.add(e) }
        let lanes = builder.model(title: "t").lanes
        #expect(lanes.map(\.deviceID) == ["uuid-1"], "no second lane for the CLI's address")
        let lane = try #require(lanes.first)
        #expect(lane.deviceName == "Lobby TV")
        #expect(lane.sessions.map(\.id) == ["app-daemon", "app-cli"])
        #expect(lane.sessions.map(\.process) == ["daemon 100", "cli 200"])
        #expect(lane.sessions[0].end == nil, "the CLI's end (its session #1) does not end the daemon's session #1")
        #expect(lane.sessions[1].end == at(4) && lane.sessions[1].endReason == "requested")
    }

    @Test func aRestartedDaemonEndsWhatThePreviousOneLeftOpenAtItsLastRecord() throws {
        var builder = TimelineBuilder()
        builder.add(session(0, "willStart", device: "uuid-1", local: 1, pid: 100, role: "daemon"))
        builder.add(session(1, "didStart", device: "uuid-1", local: 1, pid: 100, role: "daemon", app: "a1"))
        builder.add(LogEntry(time: at(5), level: .info, className: "JobDriver", body: "kept", attributes: ["pid": 100, "role": "daemon"]))
        // Killed: no didEnd. The new daemon's first records, its session #1 on the same TV.
        builder.add(LogEntry(time: at(20), level: .info, className: "PluginHost", body: "plugins loaded", attributes: ["pid": 300, "role": "daemon"]))
        builder.add(session(21, "willStart", device: "uuid-1", local: 1, pid: 300, role: "daemon"))
        builder.add(session(22, "didStart", device: "uuid-1", local: 1, pid: 300, role: "daemon", app: "a2"))
        let lane = try #require(builder.model(title: "t").lanes.first)
        #expect(lane.sessions.map(\.id) == ["a1", "a2"])
        #expect(lane.sessions[0].end == at(5), "ended at the old daemon's last record, not open over the new one")
        #expect(lane.sessions[0].endReason == "daemon crashed or was killed: no orderly stop (pid 100: no record after this)")
        #expect(lane.sessions[1].end == nil && lane.sessions[1].process == "daemon 300")
    }

    /// How the old daemon ended names the end of what it left open: its crash record (an
    /// in-process plugin's SIGSEGV), or its orderly stop.
    @Test func aCrashedDaemonsSessionsEndWithItsCrashAndAStoppedOnesWithItsStop() throws {
        func run(_ last: LogEntry?) throws -> (timeline: String?, stats: String?, open: Int) {
            var entries = [session(0, "willStart", device: "uuid-1", local: 1, pid: 100, role: "daemon"),
                           session(1, "didStart", device: "uuid-1", local: 1, pid: 100, role: "daemon", app: "a1")]
            if let last { entries.append(last) }
            entries += [session(21, "willStart", device: "uuid-1", local: 1, pid: 300, role: "daemon"),
                        session(22, "didStart", device: "uuid-1", local: 1, pid: 300, role: "daemon", app: "a2")]
            var builder = TimelineBuilder()
            var stats = LogStatistics()
            for e in entries { builder.add(e); stats.add(e) }
            let lane = try #require(builder.model(title: "t").lanes.first)
            #expect(lane.sessions.first?.end == at(5), "at the old daemon's last record")
            #expect(stats.sessions.first?.end == at(5))
            return (lane.sessions.first?.endReason, stats.sessions.first?.endReason, stats.sessions.filter { $0.end == nil }.count)
        }
        let crash = LogEntry(time: at(5), level: .error, className: "CrashReporter", body: "castline crashed: signal 11 (SIGSEGV)", attributes: [
            "pid": 100, "role": "daemon", "problem": "crashed", "signal": "SIGSEGV", "signalNumber": 11,
            "library": "/usr/lib/castline/libTestPluginCrashesInChannel.so",
        ])
        let crashed = try run(crash)
        #expect(crashed.timeline == "daemon crashed: SIGSEGV in libTestPluginCrashesInChannel.so (pid 100)")
        #expect(crashed.stats == crashed.timeline && crashed.open == 1, "only the new daemon's session is open")
        var stats = LogStatistics()
        stats.add(crash)
        #expect(stats.errors["daemon crashed: SIGSEGV in libTestPluginCrashesInChannel.so"] == 1)
        let stopping = LogEntry(time: at(5), level: .info, className: "Daemon", body: "stopping (leave casts running)",
                                attributes: ["pid": 100, "role": "daemon", "stopCasting": false])
        let stopped = try run(stopping)
        #expect(stopped.timeline == "castline stopped (pid 100: no record after this)" && stopped.stats == stopped.timeline)
    }

    @Test func recordsWithoutAProcessPairAsBefore() throws {
        var builder = TimelineBuilder()
        var start = session(0, "willStart", device: "d", local: 1, pid: 0, role: "")
        start.attributes.set("pid", .null)
        var end = session(1, "didEnd", device: "d", local: 1, pid: 0, role: "")
        end.attributes.set("pid", .null)
        builder.add(start)
        builder.add(end)
        let lane = try #require(builder.model(title: "t").lanes.first)
        #expect(lane.sessions.count == 1 && lane.sessions[0].end == at(1))
    }
}

/// The timeline's story: what each screen showed, and what happened to it with causes.
@Suite struct TimelineStoryTests {
    let t0: Int64 = 1_795_000_000_000_000_000

    func at(_ s: Double) -> Int64 { t0 + Int64(s * 1e9) }

    func e(_ s: Double, _ cls: String, _ body: String, level: LogLevel = .info, _ fields: JSONObject) -> LogEntry {
        var a = fields
        a.set("device", "tv1")
        a.set("pid", 100)
        a.set("role", "daemon")
        return LogEntry(time: at(s), level: level, className: cls, body: body, attributes: a)
    }

    @Test func lanesCarryContentAndTheStoryWithCauses() throws {
        var builder = TimelineBuilder()
        let entries = [
            e(0, "CastSession", "willStart", ["localSession": 1, "event": "willStart", "deviceName": "Lobby"]),
            e(1, "CastSession", "didStart", ["localSession": 1, "event": "didStart"]),
            e(1.02, "CastSession", "following app CC1AD845", ["appId": "CC1AD845", "session": "s1"]),
            e(1.04, "DeviceRegistry", "Lobby: the screen is job lobby's: castline cast it for job lobby", ["ownerKind": "job", "owner": "lobby"]),
            e(1.06, "RemoteMediaClient", "on screen", ["display": "media", "playback": "playing", "content": "http://m/a.mp4"]),
            e(10, "DeviceRegistry", "Lobby: the screen is another sender's: another sender's app runs (CC1AD845)", ["ownerKind": "other"]),
            e(20, "CastSession", "app CC1AD845 stopped", ["appId": "CC1AD845", "change": "stopped"]),
            e(21, "PluginChannel", "channel unavailable: plugin crasher SIGSEGV in its helper process; it is being restarted",
              level: .warning, ["plugin": "crasher", "event": "unavailable"]),
            e(30, "CastSession", "didEnd", ["localSession": 1, "event": "didEnd", "requests": 42, "failedRequests": 2]),
        ]
        for x in entries { builder.add(x) }
        let lane = try #require(builder.model(title: "t").lanes.first)
        #expect(lane.story.map(\.kind) == [.owner, .takeover, .app, .plugin])
        #expect(lane.story[2].text == "app CC1AD845 \(LogStatistics.StopCause.onDevice)")
        #expect(lane.story[3].text.hasPrefix("crasher: channel unavailable"))
        #expect(lane.summaryRequests == 42 && lane.summaryFailedRequests == 2 && lane.requests.isEmpty)
        #expect(lane.content.map(\.kind) == [.notObserved, .shown, .notShown, .notShown], "another sender, then the app closed")
        #expect(lane.content[1].content == "http://m/a.mp4" && lane.content[1].from == at(1) && lane.content[1].to == at(10))
        let html = TimelineHTML.render(builder.model(title: "t"))
        #expect(html.contains("42 requests") && html.contains("2 failed requests"), "from the session's summary, not debug traffic")
        #expect(html.contains("class=\"content-segment shown\"") && html.contains("class=\"story-event takeover\""))
        #expect(html.contains("<table class=\"story\">") && html.contains("app CC1AD845 stopped on the device while showing media"))
    }
}
