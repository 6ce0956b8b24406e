import CastCore
import CastLogging
import CastlineLogs
import Testing

@Suite struct LogStatisticsTests {
    var t: Int64 = 1_795_000_000_000_000_000

    mutating func at(_ ms: Int64) -> Int64 { t + ms * 1_000_000 }

    func traffic(_ time: Int64, _ direction: String, _ type: String, id: Int64?, local: String = "127.0.0.1:50000") -> LogEntry {
        var a: JSONObject = ["direction": .string(direction), "peer": "127.0.0.1:8009", "local": .string(local),
                             "namespace": "urn:x-cast:com.google.cast.media", "type": .string(type)]
        if let id { a.set("requestId", .int(id)) }
        return LogEntry(time: time, level: .debug, className: "CastChannel.com.google.cast.media", body: type, attributes: a)
    }

    func session(_ time: Int64, _ event: String, local: Int = 1, reason: String? = nil, level: LogLevel = .info) -> LogEntry {
        var a: JSONObject = ["device": "d1", "deviceName": "Lobby TV", "localSession": .int(Int64(local)), "event": .string(event)]
        if let reason { a.set("endReason", .string(reason)) }
        let body = event == "didSuspend" ? "didSuspend(heartbeat timeout after 10.0 s)" : event
        return LogEntry(time: time, level: level, className: "CastSession", body: body, attributes: a)
    }

    func page(_ time: Int64, _ page: String, reason: String? = nil, device: String = "d1") -> LogEntry {
        var a: JSONObject = ["device": .string(device), "deviceName": "Lobby TV", "page": .string(page), "url": "https://board.example/"]
        if let reason { a.set("reason", .string(reason)) }
        return LogEntry(time: time, level: .info, className: "JobDriver", body: page, attributes: a)
    }

    @Test mutating func screensCountTheTimeTheirPageShowedAndEveryGapWithItsReason() throws {
        var stats = LogStatistics()
        stats.add(page(at(0), "shown"))
        stats.add(page(at(10_000), "kept"))
        stats.add(page(at(15_000), "gone", reason: "the receiver app was stopped"))
        stats.add(page(at(17_500), "shown"))
        stats.add(page(at(30_000), "gone", reason: "the device was lost"))
        stats.add(page(at(40_000), "shown"))
        stats.add(page(at(50_000), "gone", reason: "another sender launched app CC1AD845"))
        stats.add(traffic(at(60_000), "in", "RECEIVER_STATUS", id: 0))
        let screen = try #require(stats.screenReport.first)
        #expect(screen.deviceName == "Lobby TV" && screen.keepAlives == 1)
        #expect(screen.shown == 15_000_000_000 + 12_500_000_000 + 10_000_000_000, "the gaps are not counted as shown")
        #expect(screen.gaps.map(\.reason) == ["the receiver app was stopped", "the device was lost", "another sender launched app CC1AD845"])
        #expect(screen.gaps.map(\.end) == [at(17_500), at(40_000), nil], "the last gap lasts to the end of the log")
        let text = stats.text(read: LogReadReport())
        #expect(text.contains("Lobby TV: https://board.example/ shown 37.5 s, 1 keep-alive(s), 3 gap(s)"), "\(text)")
        #expect(text.contains("gap 2.5 s: the receiver app was stopped") && text.contains("gap until the end of the log"))
        let json = stats.json(read: LogReadReport())
        #expect(json["screens"]?[0]?["shown_s"] == .double(37.5))
    }

    func app(_ time: Int64, _ change: String, app: String = "CC1AD845", device: String = "d1") -> LogEntry {
        LogEntry(time: time, level: .info, className: "CastSession", body: "app \(app) \(change)",
                 attributes: ["device": .string(device), "localSession": 1, "appId": .string(app), "change": .string(change)])
    }

    func display(_ time: Int64, _ playback: String, device: String = "d1") -> LogEntry {
        LogEntry(time: time, level: .info, className: "RemoteMediaClient", body: "on screen",
                 attributes: ["device": .string(device), "display": "media", "playback": .string(playback), "content": "http://m/a.mp4"])
    }

    @Test mutating func appStopsAreKeptApartByCause() throws {
        var stats = LogStatistics()
        stats.add(session(at(0), "willStart"))
        // castline's own STOP, then the stop it caused.
        stats.add(display(at(100), "playing"))
        stats.add(app(at(1_000), "stopping"))
        stats.add(app(at(1_400), "stopped"))
        // Stopped while its media played: on the device (another sender or the app ended).
        stats.add(display(at(2_000), "playing"))
        stats.add(app(at(5_000), "stopped"))
        stats.add(app(at(6_000), "stopped"))       // no media since the last stop: an idle close
        // No media shown: the device's idle close.
        stats.add(display(at(7_000), "none"))
        stats.add(app(at(40_000), "stopped"))
        // castline's stop long ago does not explain a later stop.
        stats.add(display(at(41_000), "paused"))
        stats.add(app(at(42_000), "stopping"))
        stats.add(app(at(60_000), "stopped"))
        #expect(stats.appStops == [LogStatistics.StopCause.castline: 1, LogStatistics.StopCause.onDevice: 2, LogStatistics.StopCause.idle: 2])
        #expect(stats.errors["app stopped: stopped by castline"] == 1 && stats.errors["app stopped"] == nil)
        #expect(stats.sessions.first?.appChanges.map(\.change) == ["stopped", "stopped", "stopped", "stopped", "stopped"], "the request is no app change")
        let text = stats.text(read: LogReadReport())
        #expect(text.contains("app stops, by cause") && text.contains("  closed by the device: no media shown (idle timeout): 2"), "\(text)")
        #expect(stats.json(read: LogReadReport())["appStops"]?["stopped by castline"] == 1)
    }

    @Test mutating func pluginFailuresAreCountedByPluginProblemAndDevice() throws {
        var stats = LogStatistics()
        func record(_ level: LogLevel, _ cls: String, _ fields: JSONObject) -> LogEntry {
            LogEntry(time: at(0), level: level, className: cls, body: "b", attributes: fields)
        }
        for _ in 0..<5 {
            stats.add(record(.error, "IsolatedPlugin", ["plugin": "crasher", "problem": "crashed", "signal": "SIGSEGV", "helperPid": 9]))
            // One unavailable record per channel the helper served: consequences, not counted again.
            stats.add(record(.warning, "PluginChannel", ["plugin": "crasher", "device": "tv1", "event": "unavailable", "problem": "crashed"]))
        }
        stats.add(record(.error, "IsolatedPlugin", ["plugin": "sleeper", "problem": "timed_out", "bound": 5.0]))
        stats.add(record(.error, "IsolatedPlugin", ["plugin": "eater", "problem": "limit", "limit": "memory"]))
        stats.add(record(.info, "IsolatedPlugin", ["plugin": "eater", "problem": "limit", "limit": "memory"]))   // the restart's notice
        stats.add(record(.error, "PluginChannel", ["plugin": "slow", "device": "tv2", "namespace": "urn:x-cast:x", "problem": "timed_out"]))
        stats.add(record(.warning, "PluginChannel", ["plugin": "chatty", "device": "tv1", "problem": "refused", "suppressed": 0]))
        stats.add(record(.warning, "PluginChannel", ["plugin": "chatty", "device": "tv1", "problem": "refused", "suppressed": 79]))
        stats.add(record(.error, "PluginHost", ["plugin": "", "path": "/opt/plugins/libBad.so", "problem": "init_failed"]))
        typealias K = LogStatistics.PluginFailureKey
        #expect(stats.pluginFailures == [
            K(plugin: "crasher", problem: "crash (SIGSEGV)", device: ""): 5, K(plugin: "sleeper", problem: "hang", device: ""): 1,
            K(plugin: "eater", problem: "limit (memory)", device: ""): 1, K(plugin: "slow", problem: "hang", device: "tv2"): 1,
            K(plugin: "chatty", problem: "refused send", device: "tv1"): 81, K(plugin: "libBad.so", problem: "init_failed", device: ""): 1,
        ])
        #expect(stats.pluginFailuresByProblem["crasher"] == ["crash (SIGSEGV)": 5])
        let text = stats.text(read: LogReadReport())
        #expect(text.contains("  crasher, crash (SIGSEGV): 5") && text.contains("  chatty, refused send: 81 (tv1 81)"), "\(text)")
        let json = stats.json(read: LogReadReport())["pluginFailures"]?.array ?? []
        #expect(json.contains { $0["plugin"] == "slow" && $0["problem"] == "hang" && $0["device"] == "tv2" && $0["count"] == 1 })
    }

    @Test mutating func pairsRequestsPerConnectionAndComputesPercentiles() {
        var stats = LogStatistics()
        // Two connections reuse request id 1; each reply pairs with its own request.
        stats.add(traffic(at(0), "out", "LOAD", id: 1))
        stats.add(traffic(at(1), "out", "GET_STATUS", id: 1, local: "127.0.0.1:50001"))
        stats.add(traffic(at(3), "in", "MEDIA_STATUS", id: 1, local: "127.0.0.1:50001"))
        stats.add(traffic(at(10), "in", "MEDIA_STATUS", id: 1))
        stats.add(traffic(at(11), "in", "MEDIA_STATUS", id: 0))          // unsolicited
        stats.add(traffic(at(20), "out", "LOAD", id: 2))
        stats.add(traffic(at(50), "in", "LOAD_FAILED", id: 2))
        stats.add(traffic(at(60), "out", "PAUSE", id: 3))                // never answered
        #expect(stats.latencies["LOAD"] == [10, 30])
        #expect(stats.latencies["GET_STATUS"] == [2])
        #expect(stats.unansweredByType == ["PAUSE": 1])
        #expect(stats.errors == ["LOAD → LOAD_FAILED": 1])
        let key = LogStatistics.MessageKey(namespace: "urn:x-cast:com.google.cast.media", type: "MEDIA_STATUS", direction: "in")
        #expect(stats.messages[key] == 3)
        let p = Percentiles([1, 2, 3, 4, 100])
        #expect(p?.count == 5 && p?.p50 == 3 && p?.p95 == 100 && p?.p99 == 100 && p?.max == 100)
    }

    @Test mutating func sessionsSuspendsAndEndReasons() {
        var stats = LogStatistics()
        stats.add(session(at(0), "willStart"))
        stats.add(session(at(5), "didStart"))
        stats.add(session(at(100), "didSuspend", level: .warning))
        stats.add(LogEntry(time: at(101), level: .info, className: "CastSession", body: "reconnect attempt 1 in 50 ms", attributes: ["device": "d1", "localSession": 1]))
        stats.add(session(at(400), "didResume"))
        stats.add(session(at(500), "didSuspend", level: .warning))
        stats.add(session(at(900), "didEnd", reason: "sessionGone", level: .warning))
        stats.add(session(at(1000), "willStart", local: 2))
        stats.add(session(at(1010), "didFailToStart", local: 2, reason: "connectFailed", level: .warning))
        stats.add(session(at(2000), "willStart", local: 3))
        #expect(stats.sessions.count == 3)
        #expect(stats.sessions[0].endReason == "sessionGone" && stats.sessions[0].suspends == 2 && stats.sessions[0].end == at(900))
        #expect(stats.sessions[1].endReason == "failedToStart: connectFailed")
        #expect(stats.sessions[2].end == nil && stats.sessions[2].endReason == nil)
        #expect(stats.suspensions[0].end == at(400) && stats.suspensions[0].reason == "heartbeat timeout after 10.0 s")
        #expect(stats.suspensions[0].resumed)
        #expect(stats.suspensions[1].end == at(900) && !stats.suspensions[1].resumed, "an end closes an open suspension, not as a resume")
        #expect(stats.reconnectAttempts == 1)
        #expect(stats.errors == ["session ended: sessionGone": 1, "session failed to start: connectFailed": 1])
        let json = stats.json(read: LogReadReport())
        // One didResume in the log: one resumed (the other suspension ended with its session).
        #expect(json["suspends"]?["count"] == .int(2) && json["suspends"]?["resumed"] == .int(1))
        #expect(json["suspends"]?["list"]?[1]?["outcome"] == "ended")
        #expect(stats.text(read: LogReadReport()).contains("suspends: 2, resumed 1,"))
    }

    @Test mutating func anEndRequestedDuringAnOutageSaysSo() {
        var stats = LogStatistics()
        stats.add(session(at(0), "willStart"))
        stats.add(session(at(5), "didStart"))
        stats.add(session(at(100), "didSuspend", level: .warning))
        stats.add(session(at(3000), "didEnd"))
        #expect(stats.sessions[0].endReason == "requested while suspended (heartbeat timeout after 10.0 s)")
        #expect(stats.errors.isEmpty)
        let json = stats.json(read: LogReadReport())
        #expect(json["suspends"]?["resumed"] == .int(0))
        #expect(json["suspends"]?["p50_ms"] == nil)
    }

    @Test func sinkDropsAreSummed() {
        var stats = LogStatistics()
        for dropped in [10, 5] as [Int64] {
            stats.add(LogEntry(time: 1, level: .warning, className: "LogSystem", body: "log sink 'json' dropped",
                               attributes: ["sink": "json", "dropped": .int(dropped)]))
        }
        #expect(stats.droppedBySink == ["json": 15])
    }

    @Test func explainNamesTheDecidingRuleAndItsLayer() throws {
        let e = try LevelExplanation.explain(className: "CastChannel.com.google.cast.tp.heartbeat",
                                             layers: [("castline.yaml (logging.rules)", "debug"), ("--log", "info,CastChannel.*:debug,*heartbeat:none")],
                                             defaultMinimum: .warning)
        #expect(e.decision.level == .none && e.decision.ruleIndex == 1)
        #expect(e.overridden.map(\.index) == [0])
        #expect(e.text.contains("decided by rule #2 '*heartbeat:none' from --log"))
        #expect(e.text.contains("layer 1: castline.yaml (logging.rules) (file) \"debug\" (replaced by --log)"))
        #expect(e.json["rule"]?["layer"] == "command line" && e.json["layers"]?.array?.map { $0["layer"] } == ["file", "command line"])
        let none = try LevelExplanation.explain(className: "JobDriver", layers: [("CASTLINE_LOG", "error,Cast*:debug")], defaultMinimum: .warning)
        #expect(none.decision.level == .error && none.minimumSource == "CASTLINE_LOG")
        #expect(none.text.contains("the minimum level error applies (set by CASTLINE_LOG (environment))"))
        #expect(none.json["minimumLayer"] == "environment")
        let runtime = try LevelExplanation.explain(className: "PluginChannel", layers: [("/etc/castline.yaml", "info"), ("api", "info,CastSession:debug,Plugin*:trace")],
                                                   defaultMinimum: .info)
        #expect(runtime.decision.level == .verbose && runtime.json["rule"]?["layer"] == "runtime change")
        #expect(runtime.text.contains("from api (runtime change: castline log-level or the API)"))
        #expect(throws: LevelExplanation.LayerError.self) {
            try LevelExplanation.explain(className: "A", layers: [("--log", "Cast[:debug")], defaultMinimum: .info)
        }
    }
}
