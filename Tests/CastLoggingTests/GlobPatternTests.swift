import CastTestSupport
import Testing
@testable import CastLogging

@Suite struct GlobPatternTests {
    @Test(arguments: [
        ("CastSession", "CastSession", true),
        ("CastSession", "CastSessionX", false),
        ("*", "", true),
        ("*", "anything.at.all", true),
        ("*Session", "CastSession", true),
        ("*Session", "CastSessionManager", false),
        ("GCK*Session", "GCKCastSession", true),
        ("GCK*Session", "CastSession", false),
        ("CastChannel.*heartbeat", "CastChannel.com.google.cast.tp.heartbeat", true),
        ("CastChannel.*heartbeat", "CastChannel.com.google.cast.media", false),
        ("Cast?ession", "CastSession", true),
        ("Cast?ession", "Castession", false),
        ("[CD]iscovery*", "Discovery", true),
        ("[CD]iscovery*", "Ciscovery", true),
        ("[CD]iscovery*", "discovery", false),
        ("[!a-z]*", "Upper", true),
        ("[!a-z]*", "lower", false),
        ("[^a-z]*", "lower", false),
        ("a\\*b", "a*b", true),
        ("a\\*b", "axb", false),
        ("*a*b*c*", "xxaxxbxxcxx", true),
        ("*a*b*c*", "xxaxxcxxbxx", false),
        ("a*a", "a", false),
        ("a*a", "aa", true),
        ("?", "é", true),
        ("caf?", "café", true),
        ("[é]", "é", true),
        ("*.media", "CastChannel.com.google.cast.media", true),
    ])
    func matches(pattern: String, name: String, expected: Bool) throws {
        let glob = try GlobPattern(pattern)
        #expect(glob.matches(name) == expected, "\(pattern) vs \(name)")
    }

    @Test func staticStringMatching() throws {
        let glob = try GlobPattern("start*(*:)")
        #expect(glob.matches("startSession(device:)" as StaticString))
        #expect(!glob.matches("stop()" as StaticString))
    }

    @Test(arguments: [
        ("[abc", 0, "no closing"),
        ("x[]", 1, "empty character class"),
        ("[z-a]", 1, "reversed"),
        ("abc\\", 3, "escapes nothing"),
    ])
    func syntaxErrors(pattern: String, offset: Int, reason: String) {
        #expect {
            _ = try GlobPattern(pattern)
        } throws: { error in
            guard let e = error as? GlobSyntaxError else { return false }
            return e.offset == offset && e.reason.contains(reason)
        }
    }

    /// A 5,000-character `*a*a*a…` pattern against 5,000-character names: correct results, and
    /// the time limit fails an exponential or backtracking matcher.
    @Test(.timeLimit(.minutes(1))) func pathologicalPatternsStayLinear() throws {
        let pattern = String(repeating: "*a", count: 2500)
        let glob = try GlobPattern(pattern)
        #expect(pattern.count == 5000)
        #expect(glob.matches(String(repeating: "a", count: 5000)))
        #expect(!glob.matches(String(repeating: "a", count: 2499) + String(repeating: "b", count: 2501)))
        #expect(!glob.matches(String(repeating: "a", count: 4999) + "b"))
        let ends = try GlobPattern(String(repeating: "*a", count: 2499) + "*b")
        #expect(!ends.matches(String(repeating: "a", count: 5000)))
        #expect(ends.matches(String(repeating: "a", count: 4999) + "b"))
        let long = try GlobPattern("*" + String(repeating: "a", count: 2500) + "b*")
        #expect(!long.matches(String(repeating: "a", count: 5000)))
    }

    /// Cross-checks the segment matcher against a plain recursive reference on every small case.
    @Test func agreesWithReferenceMatcher() throws {
        let patternAlphabet: [String] = ["a", "b", "*", "?", "[ab]", "[!a]"]
        let nameAlphabet: [Character] = ["a", "b", "c"]
        var generator = SplitMix64(seed: 0xC0FFEE)
        var checked = 0
        for _ in 0..<4000 {
            let pLength = Int(generator.next() % 6)
            var tokens: [String] = []
            for _ in 0..<pLength { tokens.append(patternAlphabet[Int(generator.next() % UInt64(patternAlphabet.count))]) }
            let nLength = Int(generator.next() % 8)
            var name = ""
            for _ in 0..<nLength { name.append(nameAlphabet[Int(generator.next() % 3)]) }
            let glob = try GlobPattern(tokens.joined())
            let expected = referenceMatch(tokens[...], Array(name)[...])
            #expect(glob.matches(name) == expected, "pattern \(tokens.joined()) name \(name)")
            checked += 1
        }
        #expect(checked == 4000)
    }

    private func referenceMatch(_ p: ArraySlice<String>, _ n: ArraySlice<Character>) -> Bool {
        guard let first = p.first else { return n.isEmpty }
        switch first {
        case "*":
            var rest = n
            while true {
                if referenceMatch(p.dropFirst(), rest) { return true }
                if rest.isEmpty { return false }
                rest = rest.dropFirst()
            }
        case "?": return !n.isEmpty && referenceMatch(p.dropFirst(), n.dropFirst())
        case "[ab]": return n.first.map { $0 == "a" || $0 == "b" } == true && referenceMatch(p.dropFirst(), n.dropFirst())
        case "[!a]": return n.first.map { $0 != "a" } == true && referenceMatch(p.dropFirst(), n.dropFirst())
        default: return n.first.map { String($0) == first } == true && referenceMatch(p.dropFirst(), n.dropFirst())
        }
    }
}

@Suite("GlobPattern and Unicode")
struct GlobPatternUnicodeTests {
    @Test("patterns are read by Unicode scalar and matched by UTF-8 bytes: '*' before a combining mark is a wildcard; canonically equivalent text is not the same literal")
    func scalarsAndBytes() throws {
        let star = try GlobPattern("*\u{59E}")              // '*' + HEBREW ACCENT GERSHAYIM
        #expect(star.matches("abc\u{59E}"))
        #expect(!star.matches("abc"))
        let decomposed = try GlobPattern("e\u{301}")         // e + COMBINING ACUTE
        #expect(decomposed.matches("e\u{301}"))
        #expect(!decomposed.matches("\u{E9}"), "é precomposed is other bytes")
    }
}
