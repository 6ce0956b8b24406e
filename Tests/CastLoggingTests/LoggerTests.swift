import Testing
@testable import CastLogging

@Suite struct LoggerTests {
    @Test func capturesClassFunctionFileLineAndFields() throws {
        let (system, sink) = try makeSystem()
        let log = Logger(class: "CastSession", system: system).with(["device": "dev-1"])
        let line: UInt = #line + 1
        log.info("session started", ["session": "s-9", "requestId": 7])
        system.flush()
        let r = try #require(sink.records.first)
        #expect(r.className == "CastSession")
        #expect(r.level == .info)
        #expect(r.message == "session started")
        #expect(r.function == "capturesClassFunctionFileLineAndFields()")
        #expect(r.file == "CastLoggingTests/LoggerTests.swift")
        #expect(r.line == line)
        #expect(r.fields.keys == ["device", "session", "requestId"])
        #expect(r.fields["requestId"] == .int(7))
        system.shutdown()
    }

    @Test func disabledStatementsBuildNothing() throws {
        let (system, sink) = try makeSystem("warning")
        let log = Logger(class: "Quiet", system: system)
        let counter = Counter()
        log.debug(counter.bump(), ["k": .string(counter.bump())])
        log.info(counter.bump())
        #expect(counter.count == 0)
        log.warning(counter.bump())
        #expect(counter.count == 1)
        system.flush()
        #expect(sink.records.count == 1)
        system.shutdown()
    }

    @Test func noneLevelNeverLogsAndNoneThresholdBlocksAll() throws {
        let (system, sink) = try makeSystem("verbose,Muted:none")
        Logger(class: "Any", system: system).log(.none, "never")
        Logger(class: "Muted", system: system).assertionFailure("blocked")
        Logger(class: "Any", system: system).assertionFailure("kept")
        system.flush()
        #expect(sink.records.map(\.message) == ["kept"])
        system.shutdown()
    }

    @Test func cachedThresholdFollowsRuleChanges() throws {
        let (system, sink) = try makeSystem("info")
        let log = Logger(class: "CastSession", system: system)
        #expect(!log.isEnabled(.debug))
        log.debug("dropped")
        try system.filter.setLoggingLevel(.debug, forClasses: ["*Session"])
        #expect(log.isEnabled(.debug))
        log.debug("kept after change")
        system.filter.minimumLevel = .error
        try system.filter.setLoggingLevel(.error, forClasses: ["Cast*"])
        #expect(!log.isEnabled(.warning))
        log.warning("dropped again")
        system.flush()
        #expect(sink.records.map(\.message) == ["kept after change"])
        system.shutdown()
    }

    @Test func functionRulesApplyPerCallSite() throws {
        let (system, sink) = try makeSystem("info,@noisy*:none,@chatty*:verbose")
        let log = Logger(class: "Heartbeat", system: system)
        func noisyPing() { log.warning("ping") }
        func chattyPong() { log.verbose("pong") }
        func plain() { log.verbose("plain") ; log.info("info") }
        noisyPing()
        chattyPong()
        plain()
        system.flush()
        #expect(sink.records.map(\.message) == ["pong", "info"])
        system.shutdown()
    }

    @Test func messagePatternsRunOnlyAfterTheLevelCheck() throws {
        let (system, sink) = try makeSystem("info")
        try system.filter.addMessagePatterns(["(?i)^load", "timeout"])
        let log = Logger(class: "Media", system: system)
        let counter = Counter()
        log.debug(counter.bump())
        #expect(counter.count == 0)
        log.info("LOAD sent")
        log.info("PLAY sent")
        log.warning("request timeout after 10 s")
        system.flush()
        #expect(sink.records.map(\.message) == ["LOAD sent", "request timeout after 10 s"])
        system.shutdown()
    }

    @Test func loggerForTypeUsesTheTypeName() {
        struct DiscoveryManager {}
        let system = LogSystem()
        #expect(Logger(for: DiscoveryManager.self, system: system).className == "DiscoveryManager")
    }
}
