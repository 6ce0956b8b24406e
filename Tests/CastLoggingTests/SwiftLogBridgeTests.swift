import Testing
import Logging
@testable import CastLogging

@Suite struct SwiftLogBridgeTests {
    @Test func swiftLogRecordsGoThroughTheSameFilter() throws {
        let (system, sink) = try makeSystem("info,io.swiftnio.*:debug")
        let nio = Logging.Logger(label: "io.swiftnio.channel") { CastLogHandler(label: $0, system: system) }
        let other = Logging.Logger(label: "other.lib") { CastLogHandler(label: $0, system: system) }
        #expect(nio.logLevel == .debug)
        #expect(other.logLevel == .info)
        nio.debug("channel active", metadata: ["fd": "7", "count": .stringConvertible(3)])
        nio.trace("filtered")
        other.debug("filtered too")
        other.error("boom", error: CancellationError())
        system.flush()
        let records = sink.records
        #expect(records.map(\.message) == ["channel active", "boom"])
        #expect(records[0].className == "io.swiftnio.channel")
        #expect(records[0].fields["fd"] == "7")
        #expect(records[0].fields["count"] == .int(3))
        #expect(records[0].fields["source"] == "CastLoggingTests")
        #expect(records[1].level == .error)
        #expect(records[1].fields["error"] != nil)
        system.shutdown()
    }

    @Test func levelFollowsRuleChangesAndOverrideOnlyRaisesTheBar() throws {
        let (system, sink) = try makeSystem("warning")
        var logger = Logging.Logger(label: "lib") { CastLogHandler(label: $0, system: system) }
        #expect(logger.logLevel == .warning)
        try system.filter.setLoggingLevel(.verbose, forClasses: ["lib"])
        #expect(logger.logLevel == .trace)
        logger.logLevel = .error
        logger.warning("below override")
        logger.error("passes")
        let copy = Logging.Logger(label: "lib") { CastLogHandler(label: $0, system: system) }
        #expect(copy.logLevel == .trace)  // value semantics: the override stayed on `logger`
        system.flush()
        #expect(sink.records.map(\.message) == ["passes"])
        system.shutdown()
    }
}
