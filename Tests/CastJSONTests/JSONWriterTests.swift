import Testing
@testable import CastJSON

/// `JSONWriter`'s own API, as the JSON sink and the console formatter use it.
@Suite("JSON writer")
struct JSONWriterTests {
    static func written(capacity: Int = 16, _ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter(capacity: capacity)
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func unsignedIntegersOfEveryWidth() {
        var value: UInt64 = 1
        for digits in 1...19 {
            for candidate in [value - 1, value, value * 9 + (value - 1)] {
                #expect(Self.written { $0.write(unsigned: candidate) } == String(candidate), "\(digits) digits")
            }
            value *= 10
        }
        #expect(Self.written { $0.write(unsigned: .max) } == "18446744073709551615")
        #expect(JSONWriter.decimalDigits(.max) == 20)
        #expect(Self.written { $0.write(unsigned: 42, minimumDigits: 9) } == "000000042")
        #expect(Self.written { $0.write(unsigned: 123_456_789, minimumDigits: 9) } == "123456789")
        #expect(Self.written { $0.write(unsigned: 0, minimumDigits: 3) } == "000")
        #expect(Self.written { $0.write(integer: -7) } == "-7")
    }

    @Test func textModeEscapesControlCharactersOnly() {
        let text = Array("say \"hi\" \\ \u{1B}[0m\n\ttab".utf8)
        let quoted = Self.written { writer in text.withUnsafeBufferPointer { writer.write(string: $0) } }
        #expect(quoted == #""say \"hi\" \\ \u001b[0m\n\ttab""#)
        let plain = Self.written { writer in text.withUnsafeBufferPointer { writer.writeEscaped($0, quotesAndBackslashes: false) } }
        #expect(plain == #"say "hi" \ \u001b[0m\n\ttab"#)
    }

    /// Long strings from a small buffer: the writer grows and every escape lands where it belongs.
    @Test func growsAcrossLongStringsWithEscapes() throws {
        let long = String(repeating: "abc\"def\u{1}ghijklmnopq\\", count: 300)
        let text = Self.written(capacity: 16) { writer in
            writer.append(UInt8(ascii: "["))
            writer.write(string: long)
            writer.append(",")
            writer.write(double: 0.5)
            writer.append(UInt8(ascii: "]"))
        }
        #expect(try JSONValue.parse(text) == [.string(long), 0.5])
        var writer = JSONWriter(capacity: 16)
        writer.write(string: long)
        writer.removeAll()
        #expect(writer.count == 0)
        writer.append(contentsOf: "x")
        #expect(Array(writer.bytes) == [UInt8(ascii: "x")])
    }
}
