import CastTestSupport
import Testing
@testable import CastCore

/// The C fast path (`CJSONTape`) must write exactly the Swift parser's tape for every document
/// it accepts, and decline the rest (which the Swift parser then parses or rejects itself).
@Suite("JSON parser fast path")
struct JSONFastPathTests {
    static func outcome(_ text: String) -> JSONFastPathCheck.Outcome {
        Array(text.utf8).withUnsafeBytes { JSONFastPathCheck.compare($0) }
    }

    /// What Cast devices send: taken by the fast path.
    static let accepted: [String] = TapeDecodingTests.payloads.filter { !$0.contains("\\") && (try? JSONValue.parse($0)) != nil }
        + [
            "0", "-0", "-1", "9223372036854775807", "-9223372036854775808", "9007199254740992", "1.5", "-0.0",
            "1e22", "1E-22", "12345678901234e-5", "0.000001", "\"\u{7F}\"", "1.0", "2.5e+3", " \t\r\n[ 1 , {\"a\" : [ ] } ]\n ",
            "\"h\u{e9}llo \u{1F600} \u{800}\u{FFFF}\u{10FFFF}\"", "[true,false,null]", "{}", "[]", "\"\"",
            String(repeating: "[", count: 64) + String(repeating: "]", count: 64),
            "[" + (0..<200).map { "{\"k\u{e9}y\($0)\":\($0).25}" }.joined(separator: ",") + "]",
        ]

    @Test("documents the fast path parses agree entry for entry", arguments: accepted)
    func agrees(_ text: String) {
        guard case .agreed = Self.outcome(text) else {
            Issue.record("\(Self.outcome(text)) for \(text)")
            return
        }
    }

    /// Escapes, numbers that need correct rounding, nesting past the limit and every error are
    /// declined; the result is then the Swift parser's alone.
    static let declined: [String] = [
        #""a\"b""#, #"{"t\u0079pe":1}"#, #""\/""#, "12345678901234567890", "9223372036854775808", "-9223372036854775809",
        "1e23", "1.7976931348623157e308", "1e400", "0.1e-30", "4.9e-324",
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        "", " ", "[1,]", "{\"a\"}", "[1 2]", "01", "1.", ".5", "-", "+1", "1e", "tru", "nul", "[\"\u{1}\"]", "\"abc",
        "[1]x", "{\"a\":1,}", "123456789012345678e-5",
    ]

    @Test("declined documents", arguments: declined)
    func declines(_ text: String) {
        #expect(Self.outcome(text) == .declined, "\(text)")
    }

    @Test func invalidUTF8IsDeclined() {
        for bytes: [UInt8] in [[0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
                                [0x22, 0xE2, 0x82, 0x22], [0x22, 0xFF, 0x22], [0x22, 0x80, 0x22]] {
            let outcome = bytes.withUnsafeBytes { JSONFastPathCheck.compare($0) }
            #expect(outcome == .declined, "\(bytes)")
            #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes: bytes) }
        }
    }

    /// Random documents: nested containers, ASCII and non-ASCII strings (some long enough for the
    /// 16-byte scan, some not), integers, fractions, exponents and whitespace; deterministic.
    @Test func randomDocumentsAgree() {
        var random = SplitMix64(seed: 0xCA57_11E0)
        var agreed = 0
        for _ in 0..<3000 {
            let text = Self.randomValue(&random, depth: 0)
            switch Self.outcome(text) {
            case .agreed: agreed += 1
            case .declined: break
            case .disagreed(let why): Issue.record("\(why) for \(text)")
            }
        }
        #expect(agreed > 2500)
    }

    static func randomValue(_ random: inout SplitMix64, depth: Int) -> String {
        let pick = Int(random.next() % (depth < 4 ? 9 : 6))
        let space = [" ", "", "", "\n", "\t "][Int(random.next() % 5)]
        switch pick {
        case 0: return ["true", "false", "null"][Int(random.next() % 3)]
        case 1: return String(Int64(bitPattern: random.next()) >> Int(random.next() % 64))
        case 2: return "\(Int(random.next() % 100_000))" + (random.next() % 2 == 0 ? ".\(random.next() % 1000)" : "") + (random.next() % 3 == 0 ? "e\(Int(random.next() % 40) - 20)" : "")
        case 3: return "-0." + String(repeating: "0", count: Int(random.next() % 5)) + "\(random.next() % 999 + 1)"
        case 4, 5: return "\"" + randomString(&random) + "\""
        case 6, 7:
            let count = Int(random.next() % 6)
            return "{" + space + (0..<count).map { _ in "\"" + randomString(&random) + "\"" + space + ":" + randomValue(&random, depth: depth + 1) }.joined(separator: "," + space) + "}"
        default:
            let count = Int(random.next() % 6)
            return "[" + (0..<count).map { _ in space + randomValue(&random, depth: depth + 1) }.joined(separator: ",") + space + "]"
        }
    }

    static func randomString(_ random: inout SplitMix64) -> String {
        let alphabet: [String] = ["a", "Z", "0", " ", "/", ":", "\u{e9}", "\u{4E2D}", "\u{1F600}", "-", "_", "."]
        let length = Int(random.next() % 40)
        return (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined()
    }

    @Test func theBenchmarkPayloadTakesTheFastPath() {
        #expect(Self.outcome(TapeDecodingTests.payloads[0]) == .agreed(entries: 32))
    }
}
