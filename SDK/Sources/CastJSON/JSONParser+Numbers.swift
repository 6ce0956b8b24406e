extension JSONParser {
    /// Exact powers of ten representable as `Double` (10^0 … 10^22), for the fast path.
    static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Parses a number per RFC 8259's grammar.
    ///
    /// Integers (no fraction, no exponent) that fit `Int64` become `.int`; `-0` becomes
    /// `.double(-0.0)` so the sign survives; everything else is a `.double`. Doubles with at most
    /// ~15 significant digits and a decimal exponent within ±22 are computed exactly with one
    /// multiplication or division (Clinger's fast path); the rest go through the standard
    /// library's correctly rounded conversion. Magnitudes beyond `Double`'s range are an error
    /// ("number out of range": an infinity could not be written back, so parse → serialize →
    /// parse would not be the identity); magnitudes below it round to ±0.
    mutating func parseNumber() throws(JSONParseError) {
        let begin = index
        var position = index
        var negative = false
        if base[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < count else { throw endOfInput() }

        var mantissa: UInt64 = 0
        var significantDigits = 0
        var truncated = false
        var decimalExponent = 0
        var isInteger = true

        @inline(__always)
        func accumulate(_ digit: UInt8) {
            if significantDigits < 19 {
                mantissa = mantissa &* 10 &+ UInt64(digit)
                if mantissa != 0 { significantDigits += 1 }
            } else {
                truncated = true
            }
        }

        let first = base[position]
        if first == UInt8(ascii: "0") {
            position += 1
            if position < count, Self.isDigit(base[position]) {
                throw JSONParseError(offset: position, reason: "leading zeros are not allowed in numbers")
            }
        } else if first >= UInt8(ascii: "1") && first <= UInt8(ascii: "9") {
            while position < count, Self.isDigit(base[position]) {
                accumulate(base[position] &- UInt8(ascii: "0"))
                position += 1
            }
        } else {
            throw JSONParseError(offset: position, reason: "expected a digit in number")
        }

        if position < count, base[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < count else { throw endOfInput() }
            guard Self.isDigit(base[position]) else {
                throw JSONParseError(offset: position, reason: "expected a digit after '.' in number")
            }
            while position < count, Self.isDigit(base[position]) {
                accumulate(base[position] &- UInt8(ascii: "0"))
                if !truncated { decimalExponent -= 1 }
                position += 1
            }
        }

        if position < count, base[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            var exponentNegative = false
            if position < count, base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-") {
                exponentNegative = base[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < count else { throw endOfInput() }
            guard Self.isDigit(base[position]) else {
                throw JSONParseError(offset: position, reason: "expected a digit in number exponent")
            }
            var exponent = 0
            while position < count, Self.isDigit(base[position]) {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(base[position] &- UInt8(ascii: "0")) }
                position += 1
            }
            decimalExponent += exponentNegative ? -exponent : exponent
        }
        index = position

        if isInteger && !truncated {
            if mantissa == 0 { return negative ? emitDouble(-0.0) : emitInt(0) }
            if !negative {
                if mantissa <= UInt64(Int64.max) { return emitInt(Int64(mantissa)) }
            } else if mantissa <= UInt64(Int64.max) + 1 {
                return emitInt(Int64(truncatingIfNeeded: 0 &- mantissa))
            }
        }
        if !truncated {
            if mantissa == 0 { return emitDouble(negative ? -0.0 : 0.0) }
            if mantissa <= 1 << 53 && decimalExponent >= -22 && decimalExponent <= 22 {
                var value = Double(mantissa)
                if decimalExponent < 0 {
                    value /= Self.exactPowersOfTen[-decimalExponent]
                } else {
                    value *= Self.exactPowersOfTen[decimalExponent]
                }
                return emitDouble(negative ? -value : value)
            }
        }
        emitDouble(try slowDouble(from: begin, to: position))
    }

    @inline(__always)
    mutating func emitInt(_ value: Int64) {
        emit(JSONTapeEntry.intTag, UInt64(bitPattern: value))
    }

    @inline(__always)
    mutating func emitDouble(_ value: Double) {
        emit(JSONTapeEntry.doubleTag, value.bitPattern)
    }

    /// Correctly rounded conversion of the validated number text `[begin, end)`.
    func slowDouble(from begin: Int, to end: Int) throws(JSONParseError) -> Double {
        let text = String(decoding: UnsafeBufferPointer(start: base + begin, count: end - begin), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(offset: begin, reason: "number out of range")
        }
        return value
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
