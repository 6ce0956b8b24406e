import CastTestSupport
import Testing
@testable import CastJSON

@Suite("JSON numbers")
struct JSONNumberTests {
    @Test func integers() throws {
        #expect(try JSONValue.parse("0") == .int(0))
        #expect(try JSONValue.parse("7") == .int(7))
        #expect(try JSONValue.parse("-42") == .int(-42))
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("274447") == .int(274_447))
    }

    @Test func integerOverflowBecomesDouble() throws {
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_808.0))  // nearest double
        #expect(try JSONValue.parse("18446744073709551616") == .double(18_446_744_073_709_551_616))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test func negativeZeroKeepsItsSign() throws {
        for text in ["-0", "-0.0", "-0e5"] {
            let value = try JSONValue.parse(text)
            guard case .double(let number) = value else {
                Issue.record("\(text) → \(value)")
                continue
            }
            #expect(number == 0 && number.sign == .minus, "\(text)")
        }
        #expect(try JSONValue.parse("0.0") == .double(0))
        #expect(try JSONValue.parse("0e0") == .double(0))
    }

    @Test func fractionsAndExponents() throws {
        let cases: [(String, Double)] = [
            ("1.5", 1.5), ("0.1", 0.1), ("-2.25", -2.25), ("12.0", 12), ("1E2", 100), ("1e+2", 100),
            ("1e-2", 0.01), ("2.5E-3", 0.0025), ("0.44999998807907104", 0.44999998807907104),
            ("0.009999999776482582", 0.009999999776482582), ("1e22", 1e22), ("1e23", 1e23),
            ("1e308", 1e308), ("1.7976931348623157e308", .greatestFiniteMagnitude),
            ("2.2250738585072014e-308", 2.2250738585072014e-308), ("5e-324", .leastNonzeroMagnitude),
            ("3.14159265358979323846264338327950288", .pi), ("0.30000000000000004", 0.30000000000000004),
            ("123456789.123456789", 123_456_789.123456789), ("0.000001", 0.000001),
            ("9007199254740993.0", 9_007_199_254_740_992), ("1e0000000000000000000001", 10),
        ]
        for (text, expected) in cases {
            #expect(try JSONValue.parse(text) == .double(expected), "\(text)")
        }
    }

    @Test func outOfRangeMagnitudes() throws {
        // Too large: an error (an infinity would serialize as null and break the round trip).
        #expect(parseError("1e309") == JSONParseError(offset: 0, reason: "number out of range"))
        #expect(parseError("[1, -1e400]") == JSONParseError(offset: 4, reason: "number out of range"))
        #expect(parseError("1e99999999999999999999")?.reason == "number out of range")
        #expect(parseError("18" + String(repeating: "0", count: 400))?.reason == "number out of range")
        // Too small: rounds to zero, keeping the sign.
        #expect(try JSONValue.parse("1e-400") == .double(0))
        #expect(try JSONValue.parse("-1e-400").double?.sign == .minus)
        #expect(try JSONValue.parse("1e-99999999999999999999") == .double(0))
    }

    @Test func fastPathAgreesWithStandardLibrary() throws {
        var generator = SplitMix64(seed: 0xCA57)
        for _ in 0..<5_000 {
            let mantissa = Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &generator)
            let exponent = Int.random(in: -30...30, using: &generator)
            let text = "\(mantissa)e\(exponent)"
            #expect(try JSONValue.parse(text) == .double(Double(text)!), "\(text)")
            let bits = Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF)
            let shortest = bits.description
            #expect(try JSONValue.parse(shortest).double == bits, "\(shortest)")
            let decimal = "\(mantissa / 1000).\(String(mantissa.magnitude % 1000))"
            #expect(try JSONValue.parse(decimal) == .double(Double(decimal)!), "\(decimal)")
        }
    }

    @Test func longNumbersAreLinear() throws {
        let digits = String(repeating: "7", count: 200_000)
        #expect(parseError(digits)?.reason == "number out of range")
        #expect(try JSONValue.parse("0." + digits).double == 0.7777777777777778)
        let ones = String(repeating: "1", count: 300)
        #expect(try JSONValue.parse(ones) == .double(Double(ones)!))
    }

    @Test func accessorsConvertBetweenIntAndDouble() throws {
        #expect(JSONValue.double(3).int == 3)
        #expect(JSONValue.double(3.5).int == nil)
        #expect(JSONValue.double(1e30).int == nil)
        #expect(JSONValue.double(.nan).int == nil)
        #expect(JSONValue.int(1).double == 1.0)
        #expect(JSONValue.string("1").int == nil)
        #expect(JSONValue.bool(true).double == nil)
    }
}
