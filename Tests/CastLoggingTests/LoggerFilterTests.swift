import Testing
@testable import CastLogging

@Suite struct LoggerFilterTests {
    @Test func lastMatchingRuleWins() throws {
        #expect(try LoggerFilter(parsing: "foo*:verbose,*:error").level(forClass: "fooBar") == .error)
        #expect(try LoggerFilter(parsing: "*:error,foo*:verbose").level(forClass: "fooBar") == .verbose)
        // GStreamer's documented example: "foosrc:6,*src:3,*:2" sets everything to the last level.
        let gst = try LoggerFilter(parsing: "foosrc:verbose,*src:info,*:warning")
        #expect(gst.level(forClass: "foosrc") == .warning)
        #expect(gst.level(forClass: "barsrc") == .warning)
    }

    @Test func minimumLevelAppliesWhereNoRuleMatches() throws {
        let filter = try LoggerFilter(parsing: "error,*Session:verbose")
        #expect(filter.level(forClass: "CastSession") == .verbose)
        #expect(filter.level(forClass: "DiscoveryManager") == .error)
        #expect(LoggerFilter().level(forClass: "Anything") == .info)
    }

    @Test func explainNamesTheDecidingRule() throws {
        let filter = try LoggerFilter(parsing: "*:info,CastChannel.*heartbeat:none,*Session:verbose")
        let heartbeat = filter.explain(className: "CastChannel.com.google.cast.tp.heartbeat")
        #expect(heartbeat.level == LogLevel.none)
        #expect(heartbeat.ruleIndex == 1)
        #expect(heartbeat.description == "none (rule #2 'CastChannel.*heartbeat:none', the last matching rule)")
        let other = filter.explain(className: "Other")
        #expect(other.ruleIndex == 0)
        let noRule = LoggerFilter(minimumLevel: .warning).explain(className: "X")
        #expect(noRule.rule == nil)
        #expect(noRule.description == "warning (minimum level: no rule matches)")
    }

    @Test func functionRulesJoinTheSameOrder() throws {
        let filter = try LoggerFilter(parsing: "CastSession:verbose,@*heartbeat*:none")
        #expect(filter.level(forClass: "CastSession", function: "send_heartbeat()") == LogLevel.none)
        #expect(filter.level(forClass: "CastSession", function: "start()") == .verbose)
        // A class rule after the function rule takes precedence again (last match wins).
        let later = try LoggerFilter(parsing: "@*heartbeat*:none,CastSession:verbose")
        #expect(later.level(forClass: "CastSession", function: "send_heartbeat()") == .verbose)
    }

    @Test func gckStyleAPI() throws {
        let filter = LoggerFilter(minimumLevel: .error)
        try filter.setLoggingLevel(.verbose, forClasses: ["GCKDiscoveryManager", "GCK*Session"])
        try filter.setLoggingLevel(.debug, forFunctions: ["load*"])
        #expect(filter.level(forClass: "GCKCastSession") == .verbose)
        #expect(filter.level(forClass: "Other", function: "loadMedia(_:)") == .debug)
        #expect(filter.ruleString == "error,GCKDiscoveryManager:verbose,GCK*Session:verbose,@load*:debug")
        filter.reset()
        #expect(filter.rules.isEmpty)
        #expect(filter.minimumLevel == .error)
        #expect(throws: GlobSyntaxError.self) { try filter.setLoggingLevel(.debug, forClasses: ["[x"]) }
    }

    @Test func generationMovesOnEveryChange() throws {
        let filter = LoggerFilter()
        let g0 = filter.generation
        filter.minimumLevel = .debug
        try filter.setLoggingLevel(.verbose, forClasses: ["A"])
        try filter.addMessagePatterns(["x"])
        filter.reset()
        #expect(filter.generation == g0 + 4)
    }

    @Test func invalidMessagePatternIsATypedError() {
        #expect(throws: MessagePatternError.self) { try LoggerFilter().addMessagePatterns(["(unclosed"]) }
    }
}
