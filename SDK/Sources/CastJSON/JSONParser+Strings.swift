extension JSONParser {
    /// Parses string contents and writes the string's tape entry; `index` is just past the
    /// opening quote. Strings without escapes stay in the input (offset and length on the tape).
    @inline(__always)
    mutating func parseString() throws(JSONParseError) {
        let begin = index
        var position = index
        var flags: UInt64 = 0
        while true {
            position = skipPlainBytes(from: position)
            guard position < count else { break }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                index = position &+ 1
                emit(JSONTapeEntry.stringTag | flags | UInt64(position &- begin) << JSONTapeEntry.lengthShift, UInt64(begin))
                return
            }
            if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(begin: begin, firstEscape: position)
            }
            if byte < 0x20 { throw controlCharacter(at: position) }
            if byte >= 0x80 {
                flags = JSONTapeEntry.nonASCIIFlag
                position = try validateUTF8Sequence(at: position)
            } else {
                position &+= 1
            }
        }
        throw unterminatedString(openedAt: begin &- 1)
    }

    /// Skips bytes that are not `"`, `\\`, a control character or non-ASCII; returns the
    /// position of the first such byte (or `count`).
    @inline(__always)
    func skipPlainBytes(from start: Int) -> Int {
        JSONBytes.skipPlain(base, from: start, count: count)
    }

    /// Slow path: at least one escape; the decoded bytes are appended to `scratch` and stay
    /// there (the tape entry points at them).
    mutating func parseEscapedString(begin: Int, firstEscape: Int) throws(JSONParseError) {
        let start = scratch.count
        scratch.append(contentsOf: UnsafeBufferPointer(start: base + begin, count: firstEscape - begin))
        var position = firstEscape
        var runStart = position
        while position < count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                flushRun(from: runStart, to: position)
                index = position + 1
                let length = scratch.count - start
                emit(JSONTapeEntry.escapedStringTag | JSONTapeEntry.nonASCIIFlag | UInt64(length) << JSONTapeEntry.lengthShift,
                     UInt64(start))
                return
            }
            if byte == UInt8(ascii: "\\") {
                flushRun(from: runStart, to: position)
                position = try parseEscape(at: position)
                runStart = position
                continue
            }
            if byte < 0x20 { throw controlCharacter(at: position) }
            if byte >= 0x80 {
                position = try validateUTF8Sequence(at: position)
            } else {
                position += 1
            }
        }
        throw unterminatedString(openedAt: begin - 1)
    }

    @inline(__always)
    mutating func flushRun(from start: Int, to end: Int) {
        if end > start {
            scratch.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
        }
    }

    /// Decodes the escape at `position` (a backslash) into `scratch`; returns the next position.
    mutating func parseEscape(at position: Int) throws(JSONParseError) -> Int {
        guard position + 1 < count else { throw unterminatedString(openedAt: nil) }
        let escaped = base[position + 1]
        let decoded: UInt8
        switch escaped {
        case UInt8(ascii: "\""): decoded = 0x22
        case UInt8(ascii: "\\"): decoded = 0x5C
        case UInt8(ascii: "/"): decoded = 0x2F
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"): return try parseUnicodeEscape(at: position)
        default:
            throw JSONParseError(offset: position, reason: "invalid escape sequence '\\\(Self.describeEscape(escaped))'")
        }
        scratch.append(decoded)
        return position + 2
    }

    static func describeEscape(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return String(Character(Unicode.Scalar(byte))) }
        return "<0x\(hex2(byte))>"
    }

    /// `\uXXXX`, with a following `\uXXXX` low surrogate when the first is a high surrogate.
    mutating func parseUnicodeEscape(at position: Int) throws(JSONParseError) -> Int {
        let first = try hex4(at: position + 2, escapeAt: position)
        var scalarValue = first
        var next = position + 6
        switch first {
        case 0xD800...0xDBFF:
            guard next + 1 < count, base[next] == UInt8(ascii: "\\"), base[next + 1] == UInt8(ascii: "u") else {
                throw JSONParseError(offset: position, reason: "unpaired high surrogate \\u\(Self.hex4String(first))")
            }
            let second = try hex4(at: next + 2, escapeAt: next)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONParseError(offset: position, reason: "unpaired high surrogate \\u\(Self.hex4String(first))")
            }
            scalarValue = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            next += 6
        case 0xDC00...0xDFFF:
            throw JSONParseError(offset: position, reason: "unpaired low surrogate \\u\(Self.hex4String(first))")
        default:
            break
        }
        appendUTF8(scalarValue)
        return next
    }

    func hex4(at start: Int, escapeAt: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for position in start..<(start + 4) {
            guard position < count else { throw unterminatedString(openedAt: nil) }
            let byte = base[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default:
                throw JSONParseError(offset: escapeAt, reason: "invalid \\u escape: expected 4 hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    static func hex4String(_ value: UInt32) -> String {
        hex2(UInt8(truncatingIfNeeded: value >> 8)) + hex2(UInt8(truncatingIfNeeded: value))
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(truncatingIfNeeded: scalar))
        case 0x80..<0x800:
            scratch.append(0xC0 | UInt8(truncatingIfNeeded: scalar >> 6))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(0xE0 | UInt8(truncatingIfNeeded: scalar >> 12))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        default:
            scratch.append(0xF0 | UInt8(truncatingIfNeeded: scalar >> 18))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 12) & 0x3F))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: (scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(truncatingIfNeeded: scalar & 0x3F))
        }
    }

    /// Checks one multi-byte UTF-8 sequence starting at `position` (lead byte ≥ 0x80); returns the
    /// position after it. Rejects overlongs, surrogates, values above U+10FFFF and truncation.
    func validateUTF8Sequence(at position: Int) throws(JSONParseError) -> Int {
        let lead = base[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw invalidUTF8(at: position)
        }
        guard position + length <= count else { throw invalidUTF8(at: position) }
        let second = base[position + 1]
        guard second >= lower && second <= upper else { throw invalidUTF8(at: position) }
        var offset = 2
        while offset < length {
            let byte = base[position + offset]
            guard byte & 0xC0 == 0x80 else { throw invalidUTF8(at: position) }
            offset += 1
        }
        return position + length
    }

    func invalidUTF8(at position: Int) -> JSONParseError {
        JSONParseError(offset: position, reason: "invalid UTF-8 sequence in string")
    }

    func controlCharacter(at position: Int) -> JSONParseError {
        JSONParseError(offset: position, reason: "unescaped control character 0x\(Self.hex2(base[position])) in string")
    }

    func unterminatedString(openedAt: Int?) -> JSONParseError {
        if let openedAt {
            return JSONParseError(offset: count, reason: "unterminated string (opened at byte \(openedAt))")
        }
        return JSONParseError(offset: count, reason: "unterminated string")
    }
}
