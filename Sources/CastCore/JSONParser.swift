/// Hand-written recursive-descent JSON parser over UTF-8 bytes (RFC 8259).
///
/// Guarantees: never traps, never recurses deeper than ``maxDepth`` containers, linear time in the
/// input length, rejects invalid UTF-8 inside strings, lone surrogates, control characters,
/// leading zeros and trailing garbage. Whitespace around the value is allowed.
struct JSONParser: ~Copyable {
    /// Deepest allowed container nesting; one more is an error, never a stack overflow.
    static let maxDepth = 64

    let base: UnsafePointer<UInt8>
    let count: Int
    var index = 0
    var depth = 0
    /// Reused for strings with escapes.
    var scratch: [UInt8] = []
    /// Children of the open containers.
    var stack: JSONParserStack

    init(base: UnsafePointer<UInt8>, count: Int, stackBuffer: UnsafeMutableBufferPointer<JSONObject.Member>) {
        self.base = base
        self.count = count
        self.stack = JSONParserStack(initialBuffer: stackBuffer)
    }

    /// Children kept in stack memory before the parser's stack moves to the heap.
    static let inlineStackCapacity = 48

    /// Parses one complete JSON text.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            return .failure(JSONParseError(offset: 0, reason: "unexpected end of input"))
        }
        return withUnsafeTemporaryAllocation(of: JSONObject.Member.self, capacity: inlineStackCapacity) { stackBuffer in
            var parser = JSONParser(base: base, count: buffer.count, stackBuffer: stackBuffer)
            do throws(JSONParseError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < count { throw JSONParseError(offset: index, reason: "unexpected data after the JSON value") }
        return value
    }

    // MARK: - Helpers

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func endOfInput() -> JSONParseError {
        JSONParseError(offset: count, reason: "unexpected end of input")
    }

    /// "unexpected character 'x'" or "unexpected byte 0xFF" at `position`.
    func unexpected(at position: Int) -> JSONParseError {
        guard position < count else { return endOfInput() }
        return JSONParseError(offset: position, reason: "unexpected \(Self.describe(byte: base[position]))")
    }

    static func describe(byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(hex2(byte))"
    }

    static func hex2(_ byte: UInt8) -> String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    // MARK: - Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < count else { throw endOfInput() }
        switch base[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""):
            index += 1
            return .string(try parseStringBody())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw unexpected(at: index)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for offset in 0..<length {
            let position = index + offset
            guard position < count else { throw endOfInput() }
            if base[position] != text[offset] {
                throw JSONParseError(offset: position, reason: "invalid literal, expected '\(literal)'")
            }
        }
        index += length
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > Self.maxDepth {
            throw JSONParseError(offset: index, reason: "nesting deeper than \(Self.maxDepth) levels")
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // '['
        skipWhitespace()
        guard index < count else { throw endOfInput() }
        if base[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        let first = stack.count
        while true {
            stack.push(JSONObject.Member(key: "", value: try parseValue()))
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            let byte = base[index]
            if byte == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
            } else if byte == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(stack.popValues(from: first))
            } else {
                throw JSONParseError(offset: index, reason: "expected ',' or ']' after array element")
            }
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // '{'
        skipWhitespace()
        guard index < count else { throw endOfInput() }
        if base[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        let first = stack.count
        while true {
            guard index < count else { throw endOfInput() }
            guard base[index] == UInt8(ascii: "\"") else {
                throw JSONParseError(offset: index, reason: "expected '\"' to start an object key")
            }
            index += 1
            let key = try parseStringBody()
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            guard base[index] == UInt8(ascii: ":") else {
                throw JSONParseError(offset: index, reason: "expected ':' after object key")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            stack.push(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            let byte = base[index]
            if byte == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
            } else if byte == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(JSONObject(members: stack.popMembers(from: first)))
            } else {
                throw JSONParseError(offset: index, reason: "expected ',' or '}' after object member")
            }
        }
    }
}

// MARK: - Entry points

extension JSONValue {
    /// Parses a JSON text.
    ///
    /// Pure function, thread-safe. Throws ``JSONParseError`` with the byte offset of the problem.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { JSONParser.parse($0) }
        return try result.get()
    }

    /// Parses JSON from raw UTF-8 bytes; invalid UTF-8 inside strings is an error (outside
    /// strings any non-ASCII byte is a syntax error anyway).
    public static func parse(bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        let result = bytes.withMemoryRebound(to: UInt8.self) { JSONParser.parse($0) }
        return try result.get()
    }

    /// Parses JSON from UTF-8 bytes; see ``parse(bytes:)-(UnsafeRawBufferPointer)``.
    public static func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { JSONParser.parse($0) }
        return try result.get()
    }
}
