import Foundation
import Testing
@testable import CastLogging

/// Rule files shipped in configs/ must parse and mean what their comments say.
@Suite struct ShippedRulesTests {
    @Test func configsLoggingRulesParses() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: repo.appendingPathComponent("configs/logging.rules"), encoding: .utf8)
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.allSatisfy(\.isWhitespace) }
        #expect(lines.count == 1)
        let set = try LogRuleParser.parse(String(lines[0]))
        let filter = LoggerFilter(minimumLevel: set.minimumLevel ?? .warning, rules: set.rules)
        #expect(filter.level(forClass: "DiscoveryManager") == .info)
        #expect(filter.level(forClass: "CastSession") == .verbose)
        #expect(filter.level(forClass: "CastChannel.com.google.cast.tp.heartbeat") == LogLevel.none)
        #expect(filter.level(forClass: "Other", function: "sendPing()") == .debug)
    }
}
