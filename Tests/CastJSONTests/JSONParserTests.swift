import Testing
@testable import CastJSON

@Suite("JSON parser")
struct JSONParserTests {
    struct ValidCase: Sendable, CustomTestStringConvertible {
        let text: String
        let expected: JSONValue
        var testDescription: String { text }
    }

    static let validCases: [ValidCase] = [
        .init(text: "null", expected: .null),
        .init(text: "true", expected: true),
        .init(text: "false", expected: false),
        .init(text: "0", expected: .int(0)),
        .init(text: "-12", expected: .int(-12)),
        .init(text: "1.5", expected: .double(1.5)),
        .init(text: "\"\"", expected: ""),
        .init(text: "[]", expected: .array([])),
        .init(text: "{}", expected: .object(JSONObject())),
        .init(text: " \t\r\n[ 1 , 2 ]\n ", expected: [1, 2]),
        .init(text: "{\"a\":{\"b\":[null,{}]}}", expected: ["a": ["b": [nil, .object(JSONObject())]]]),
        .init(text: "{ \"x\" : 1 , \"y\" : \"z\" }", expected: ["x": 1, "y": "z"]),
        .init(text: "[[[]]]", expected: [[[]]]),
        .init(text: "\"h\u{e9}llo \u{1F600}\"", expected: "h\u{e9}llo \u{1F600}"),
    ]

    @Test("valid documents", arguments: validCases)
    func valid(_ testCase: ValidCase) throws {
        #expect(try JSONValue.parse(testCase.text) == testCase.expected)
        #expect(try JSONValue.parse(bytes: Array(testCase.text.utf8)) == testCase.expected)
    }

    struct InvalidCase: Sendable, CustomTestStringConvertible {
        let text: String
        let offset: Int
        let reason: String
        var testDescription: String { text.debugDescription }
    }

    static let invalidCases: [InvalidCase] = [
        .init(text: "", offset: 0, reason: "unexpected end of input"),
        .init(text: "   ", offset: 3, reason: "unexpected end of input"),
        .init(text: "{", offset: 1, reason: "unexpected end of input"),
        .init(text: "[1,", offset: 3, reason: "unexpected end of input"),
        .init(text: "{\"a\" 1}", offset: 5, reason: "expected ':' after object key"),
        .init(text: "{\"a\":1,}", offset: 7, reason: "expected '\"' to start an object key"),
        .init(text: "{a:1}", offset: 1, reason: "expected '\"' to start an object key"),
        .init(text: "{\"a\":1 \"b\":2}", offset: 7, reason: "expected ',' or '}' after object member"),
        .init(text: "[1,]", offset: 3, reason: "unexpected character ']'"),
        .init(text: "[1 2]", offset: 3, reason: "expected ',' or ']' after array element"),
        .init(text: "[1] x", offset: 4, reason: "unexpected data after the JSON value"),
        .init(text: "{\"a\":1}}", offset: 7, reason: "unexpected data after the JSON value"),
        .init(text: "tru", offset: 3, reason: "unexpected end of input"),
        .init(text: "trux", offset: 3, reason: "invalid literal, expected 'true'"),
        .init(text: "nulL", offset: 3, reason: "invalid literal, expected 'null'"),
        .init(text: "fals", offset: 4, reason: "unexpected end of input"),
        .init(text: "+1", offset: 0, reason: "unexpected character '+'"),
        .init(text: "NaN", offset: 0, reason: "unexpected character 'N'"),
        .init(text: "'a'", offset: 0, reason: "unexpected character '''"),
        .init(text: "01", offset: 1, reason: "leading zeros are not allowed in numbers"),
        .init(text: "-", offset: 1, reason: "unexpected end of input"),
        .init(text: "-a", offset: 1, reason: "expected a digit in number"),
        .init(text: "1.", offset: 2, reason: "unexpected end of input"),
        .init(text: "1.e5", offset: 2, reason: "expected a digit after '.' in number"),
        .init(text: "1e", offset: 2, reason: "unexpected end of input"),
        .init(text: "1e+", offset: 3, reason: "unexpected end of input"),
        .init(text: "1ex", offset: 2, reason: "expected a digit in number exponent"),
        .init(text: "\"abc", offset: 4, reason: "unterminated string (opened at byte 0)"),
        .init(text: "[\"a\\x\"]", offset: 3, reason: "invalid escape sequence '\\x'"),
        .init(text: "\"\\u12G4\"", offset: 1, reason: "invalid \\u escape: expected 4 hex digits"),
        .init(text: "\"\\u00\"", offset: 1, reason: "invalid \\u escape: expected 4 hex digits"),
        .init(text: "\"\\uD800\"", offset: 1, reason: "unpaired high surrogate \\uD800"),
        .init(text: "\"ab\\uD83D\\u0041\"", offset: 3, reason: "unpaired high surrogate \\uD83D"),
        .init(text: "\"\\uDC00\"", offset: 1, reason: "unpaired low surrogate \\uDC00"),
        .init(text: "\"a\u{01}\"", offset: 2, reason: "unescaped control character 0x01 in string"),
        .init(text: "\"line\nbreak\"", offset: 5, reason: "unescaped control character 0x0A in string"),
        .init(text: "\"tab\\", offset: 5, reason: "unterminated string"),
    ]

    @Test("invalid documents report the offending byte", arguments: invalidCases)
    func invalid(_ testCase: InvalidCase) {
        let error = parseError(testCase.text)
        #expect(error == JSONParseError(offset: testCase.offset, reason: testCase.reason))
    }

    @Test func errorDescription() {
        let error = parseError("{\"mediaSessionId\"1}")
        #expect(error?.description == "invalid JSON at byte 17: expected ':' after object key")
    }

    @Test("invalid UTF-8 is rejected with the offset of the bad sequence", arguments: [
        ([0x22, 0xFF, 0x22], 1),                    // never valid
        ([0x22, 0x61, 0xC3, 0x22], 2),              // truncated 2-byte sequence
        ([0x22, 0xC0, 0x80, 0x22], 1),              // overlong NUL
        ([0x22, 0xE0, 0x80, 0x80, 0x22], 1),        // overlong 3-byte
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),        // UTF-8 encoded surrogate
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // above U+10FFFF
        ([0x22, 0xE2, 0x82], 1),                    // cut off at end of input
        ([0x22, 0x5C, 0x6E, 0xFE, 0x22], 3),        // after an escape
    ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        #expect(parseError(bytes: bytes) == JSONParseError(offset: offset, reason: "invalid UTF-8 sequence in string"))
    }

    @Test func nonASCIIOutsideStringIsAnUnexpectedByte() {
        #expect(parseError(bytes: [0xFF]) == JSONParseError(offset: 0, reason: "unexpected byte 0xFF"))
        #expect(parseError(bytes: [0x5B, 0x31, 0x5D, 0x00]) == JSONParseError(offset: 3, reason: "unexpected data after the JSON value"))
    }

    @Test func validMultiByteUTF8FromBytes() throws {
        let text = "\"\u{e9}\u{20AC}\u{1F600}\u{10FFFF}\""
        #expect(try JSONValue.parse(bytes: Array(text.utf8)) == .string("\u{e9}\u{20AC}\u{1F600}\u{10FFFF}"))
        let raw = Array(text.utf8)
        let value = try raw.withUnsafeBytes { (buffer) throws(JSONParseError) -> JSONValue in
            try JSONValue.parse(bytes: buffer)
        }
        #expect(value.string == "\u{e9}\u{20AC}\u{1F600}\u{10FFFF}")
    }

    @Test func emptyRawBuffer() {
        let error: JSONParseError? = {
            do throws(JSONParseError) {
                _ = try JSONValue.parse(bytes: UnsafeRawBufferPointer(start: nil, count: 0))
                return nil
            } catch {
                return error
            }
        }()
        #expect(error == JSONParseError(offset: 0, reason: "unexpected end of input"))
    }

    @Test func escapes() throws {
        #expect(try JSONValue.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(try JSONValue.parse(#""a\u0041\u00e9\u20AC""#) == .string("aA\u{e9}\u{20AC}"))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try JSONValue.parse(#""\uD83D\uDE00x""#) == .string("\u{1F600}x"))
        #expect(try JSONValue.parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try JSONValue.parse(#""pre \n post with some longer text""#) == .string("pre \n post with some longer text"))
        // Keys go through the same path.
        #expect(try JSONValue.parse(#"{"k\u0065y":1}"#)["key"] == .int(1))
    }

    @Test func longStringsAndWordBoundaries() throws {
        // Exercise the 8-byte scanning at every alignment, with specials at every position.
        for length in 0..<40 {
            let plain = String(repeating: "a", count: length)
            #expect(try JSONValue.parse("\"\(plain)\"") == .string(plain))
            #expect(try JSONValue.parse("\"\(plain)\\n\(plain)\"") == .string(plain + "\n" + plain))
            #expect(try JSONValue.parse("\"\(plain)\u{e9}\(plain)\"") == .string(plain + "\u{e9}" + plain))
            #expect(parseError("\"\(plain)\u{1F}\"") == JSONParseError(offset: length + 1, reason: "unescaped control character 0x1F in string"))
        }
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONValue.parse(ok) }
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parseError(tooDeep) == JSONParseError(offset: 64, reason: "nesting deeper than 64 levels"))
        let objects = String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(parseError(objects)?.reason == "nesting deeper than 64 levels")
        // Far deeper than any stack could take by recursion: still a clean error.
        let huge = String(repeating: "[", count: 200_000)
        #expect(parseError(huge)?.offset == 64)
    }

    @Test func duplicateKeysAreKeptInOrder() throws {
        let value = try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.object?.count == 3)
        #expect(value["a"] == .int(1))
        #expect(value.object?.keys == ["a", "b", "a"])
    }

    @Test func largeDocumentsUseTheHeapStack() throws {
        // More children than the parser keeps in stack memory.
        let elements = (0..<500).map { "{\"i\":\($0),\"s\":\"v\($0)\"}" }.joined(separator: ",")
        let value = try JSONValue.parse("[\(elements)]")
        #expect(value.array?.count == 500)
        #expect(value[499]?["s"] == .string("v499"))
        // An error deep inside a large document cleans up without leaking or crashing.
        #expect(parseError("[\(elements),{\"i\":}]")?.reason == "unexpected character '}'")
    }

    @Test func internedAndNonInternedStringsAreEqual() throws {
        let value = try JSONValue.parse(#"["mediaSessionId","mediaSessionIdX","urn:x-cast:com.google.cast.media","type"]"#)
        #expect(value == ["mediaSessionId", "mediaSessionIdX", "urn:x-cast:com.google.cast.media", "type"])
    }

    /// The tape starts on the stack (``JSONParser/stackTapeCapacity`` entries) and moves to the
    /// heap when a document needs more: documents on both sides of the boundary, with the move
    /// happening inside an array, inside objects whose entries were reserved before it, and for
    /// the densest tape a document can need (`[1,1,…]`: an entry per two input bytes).
    @Test("documents across the stack tape's size", arguments: [1, 30, 61, 62, 63, 64, 65, 66, 200, 5000])
    func tapeGrowth(_ n: Int) throws {
        let numbers = (0..<n).map { JSONValue.int(Int64($0)) }
        let array = "[" + (0..<n).map(String.init).joined(separator: ",") + "]"
        #expect(try JSONValue.parse(array) == .array(numbers))
        let nested = #"{"head":{"a":"#+array+#"},"tail":[true,{"k":"v"}],"last":"\u00e9"}"#
        let expected: JSONValue = ["head": ["a": .array(numbers)], "tail": [true, ["k": "v"]], "last": "\u{e9}"]
        #expect(try JSONValue.parse(nested) == expected)
        let ones = "[" + Array(repeating: "1", count: n).joined(separator: ",") + "]"
        #expect(try JSONValue.parse(ones) == .array(Array(repeating: .int(1), count: n)))
    }
}
