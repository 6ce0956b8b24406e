import Testing
@testable import CastLogging

@Suite struct LogRuleParserTests {
    @Test func parsesTheDocumentedExample() throws {
        let set = try LogRuleParser.parse("*:info,CastChannel.*heartbeat:none,*Session:verbose")
        #expect(set.minimumLevel == nil)
        #expect(set.rules.map(\.description) == ["*:info", "CastChannel.*heartbeat:none", "*Session:verbose"])
        #expect(set.rules.allSatisfy { $0.target == .className })
    }

    @Test func bareLevelSetsMinimumAndWhitespaceIsIgnored() throws {
        let set = try LogRuleParser.parse("  warning , Cast*:debug ,  3 ")
        #expect(set.minimumLevel == .info)  // the last bare item wins: "3" = info
        #expect(set.rules.count == 1)
        #expect(set.rules[0].level == .debug)
    }

    @Test func emptyStringHasNoRules() throws {
        #expect(try LogRuleParser.parse("") == LogRuleSet())
        #expect(try LogRuleParser.parse("   ") == LogRuleSet())
    }

    @Test func functionRulesMayContainColons() throws {
        let set = try LogRuleParser.parse("@startSession(device:):debug,@*heartbeat*:none")
        #expect(set.rules.map(\.target) == [.function, .function])
        #expect(set.rules[0].pattern.source == "startSession(device:)")
        #expect(set.rules[0].level == .debug)
        #expect(set.rules[1].level == LogLevel.none)
    }

    @Test func commasInsideBracketsAndEscapesStayInThePattern() throws {
        let set = try LogRuleParser.parse("[a,b]*:debug,x\\,y:error")
        #expect(set.rules.map(\.pattern.source) == ["[a,b]*", "x\\,y"])
        #expect(set.rules[0].pattern.matches(",tail"))
        #expect(set.rules[1].pattern.matches("x,y"))
    }

    @Test func levelNamesAndAliases() throws {
        let set = try LogRuleParser.parse("a:TRACE,b:warn,c:off,d:critical,e:5,f:Verbose")
        #expect(set.rules.map(\.level) == [.verbose, .warning, LogLevel.none, .assert, .error, .verbose])
    }

    @Test func formatRoundTrips() throws {
        let text = "debug,*:info,CastChannel.*heartbeat:none,@send*:verbose,[a-c]?x:error"
        let set = try LogRuleParser.parse(text)
        #expect(LogRuleParser.format(minimumLevel: set.minimumLevel, rules: set.rules) == text)
    }

    /// Every grammar error names the right column.
    @Test(arguments: [
        ("*:info,,x:debug", 8, "empty rule"),
        (",*:info", 1, "empty rule"),
        ("*:info,", 7, "empty rule"),
        (":info", 1, "missing class pattern"),
        ("@:info", 2, "missing function pattern"),
        ("foo:", 5, "missing level"),
        ("*:info,foo:verbos", 12, "unknown level 'verbos'"),
        ("verbos", 1, "unknown level 'verbos'"),
        ("*:info,foo:7", 12, "unknown level '7'"),
        ("Cast[Sess:info", 5, "no closing"),
        ("x[]:info", 2, "empty character class"),
        ("[z-a]:info", 2, "reversed"),
        ("foo bar:info", 4, "spaces"),
        ("*:info,foo\\", 11, "escapes nothing"),
    ])
    func errorsPointAtTheOffendingCharacter(text: String, column: Int, reason: String) {
        #expect {
            _ = try LogRuleParser.parse(text)
        } throws: { error in
            guard let e = error as? LogRuleSyntaxError else { return false }
            return e.column == column && e.reason.contains(reason) && e.text == text
        }
    }

    @Test func pointerRendersACaret() {
        do {
            _ = try LogRuleParser.parse("*:info,foo:verbos")
            Issue.record("expected an error")
        } catch {
            #expect(error.pointer == "*:info,foo:verbos\n           ^")
            #expect(error.description == "log rules: column 12: unknown level 'verbos' (expected none, verbose, debug, info, warning, error, assert or 0-6)")
        }
    }
}
