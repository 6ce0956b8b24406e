/// Hand-written recursive-descent JSON parser over UTF-8 bytes (RFC 8259).
///
/// Guarantees: never traps, never recurses deeper than ``maxDepth`` containers, linear time in the
/// input length, rejects invalid UTF-8 inside strings, lone surrogates, control characters,
/// leading zeros and trailing garbage. Whitespace around the value is allowed.
///
/// The parser does not build `JSONValue`s: it validates the text and writes one flat
/// ``JSONTapeEntry`` per value (and per object key) into a caller-provided tape. Strings stay in
/// the input (or, when they have escapes, in `scratch`) until somebody asks for them. A
/// ``JSONTapeValue`` reads the tape; `JSONValue.parse` materializes the tree from it, the payload
/// models decode straight from it.
@usableFromInline
package struct JSONParser: ~Copyable {
    /// Deepest allowed container nesting; one more is an error, never a stack overflow.
    static let maxDepth = 64

    let base: UnsafePointer<UInt8>
    let count: Int
    var index = 0
    var depth = 0
    /// Decoded bytes of the strings that have escapes (all of them, back to back).
    @usableFromInline var scratch: [UInt8] = []
    /// Output: at first the caller's buffer (on its stack), moved to the heap by ``growTape()``
    /// when a document needs more entries. Every entry starts at a distinct input byte, so
    /// `count` entries always suffice.
    @usableFromInline var tape: UnsafeMutablePointer<JSONTapeEntry>
    var tapeCount = 0
    var tapeCapacity: Int
    /// The heap tape once the caller's buffer was too small; the caller frees it.
    @usableFromInline var heapTape: UnsafeMutablePointer<JSONTapeEntry>?

    /// Entries of the tape that ``withDocument(_:_:)`` keeps on the stack: 1 KiB, what
    /// `withUnsafeTemporaryAllocation` puts on the stack without asking. A MEDIA_STATUS without
    /// metadata needs about 40; larger documents move to the heap once.
    @inlinable static var stackTapeCapacity: Int { 64 }

    @usableFromInline
    init(base: UnsafePointer<UInt8>, count: Int, tape: UnsafeMutablePointer<JSONTapeEntry>, capacity: Int) {
        self.base = base
        self.count = count
        self.tape = tape
        self.tapeCapacity = capacity
    }

    /// Parses one complete JSON text and runs `body` on its root while the tape is alive.
    /// Inlinable, so it is specialized for the caller's result type (a generic call cost a
    /// runtime metadata lookup per document).
    @inlinable @inline(__always)
    package static func withDocument<R>(
        _ buffer: UnsafeBufferPointer<UInt8>, _ body: (JSONTapeValue) -> R
    ) -> Result<R, JSONParseError> {
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            return .failure(JSONParseError(offset: 0, reason: "unexpected end of input"))
        }
        let capacity = Swift.min(buffer.count, stackTapeCapacity)
        return withUnsafeTemporaryAllocation(of: JSONTapeEntry.self, capacity: capacity) { tapeBuffer in
            var parser = JSONParser(base: base, count: buffer.count, tape: tapeBuffer.baseAddress.unsafelyUnwrapped, capacity: capacity)
            defer { parser.heapTape?.deallocate() }
            do throws(JSONParseError) {
                try parser.parseDocument()
            } catch {
                return .failure(error)
            }
            let tape = parser.tape
            return parser.scratch.withUnsafeBufferPointer { scratch in
                .success(run(body, tape: tape, input: base, scratch: scratch.baseAddress))
            }
        }
    }

    /// Runs `body` on the root of a parsed tape.
    @inlinable @inline(__always)
    static func run<R>(
        _ body: (JSONTapeValue) -> R, tape: UnsafeMutablePointer<JSONTapeEntry>, input: UnsafePointer<UInt8>,
        scratch: UnsafePointer<UInt8>?
    ) -> R {
        let document = JSONTapeDocument(tape: UnsafePointer(tape), input: input, scratch: scratch, table: JSONStringTable.shared)
        return withUnsafePointer(to: document) { body(JSONTapeValue(document: $0, position: 0)) }
    }

    /// Parses one complete JSON text into a `JSONValue` tree.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        withDocument(buffer) { $0.jsonValue }
    }

    @usableFromInline
    mutating func parseDocument() throws(JSONParseError) {
        skipWhitespace()
        try parseValue()
        skipWhitespace()
        if index < count { throw JSONParseError(offset: index, reason: "unexpected data after the JSON value") }
    }

    // MARK: - Helpers

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index &+= 1
            default: return
            }
        }
    }

    @inline(__always)
    mutating func emit(_ header: UInt64, _ payload: UInt64) {
        if tapeCount == tapeCapacity { growTape() }
        tape[tapeCount] = JSONTapeEntry(header: header, payload: payload)
        tapeCount &+= 1
    }

    /// Reserves the entry of a container (filled by ``close(_:tag:children:)``); returns its index.
    @inline(__always)
    mutating func reserveEntry() -> Int {
        if tapeCount == tapeCapacity { growTape() }
        let slot = tapeCount
        tapeCount &+= 1
        return slot
    }

    /// Moves the tape to the heap with room for the worst case (one entry per input byte).
    @inline(never)
    mutating func growTape() {
        precondition(heapTape == nil && tapeCapacity < count, "JSON tape outgrew its worst case")
        let grown = UnsafeMutablePointer<JSONTapeEntry>.allocate(capacity: count)
        grown.moveInitialize(from: tape, count: tapeCount)
        tape = grown
        heapTape = grown
        tapeCapacity = count
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

    mutating func parseValue() throws(JSONParseError) {
        guard index < count else { throw endOfInput() }
        switch base[index] {
        case UInt8(ascii: "{"): try parseObject()
        case UInt8(ascii: "["): try parseArray()
        case UInt8(ascii: "\""):
            index &+= 1
            try parseString()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            emit(JSONTapeEntry.trueTag, 0)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            emit(JSONTapeEntry.falseTag, 0)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            emit(JSONTapeEntry.nullTag, 0)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try parseNumber()
        default:
            throw unexpected(at: index)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for offset in 0..<length {
            let position = index &+ offset
            guard position < count else { throw endOfInput() }
            if base[position] != text[offset] {
                throw JSONParseError(offset: position, reason: "invalid literal, expected '\(literal)'")
            }
        }
        index &+= length
    }

    @inline(__always)
    mutating func enterContainer() throws(JSONParseError) {
        depth &+= 1
        if depth > Self.maxDepth {
            throw JSONParseError(offset: index, reason: "nesting deeper than \(Self.maxDepth) levels")
        }
    }

    /// Fills the container entry reserved at `slot` once its children are on the tape.
    @inline(__always)
    mutating func close(_ slot: Int, tag: UInt64, children: Int) {
        tape[slot] = JSONTapeEntry(header: tag | UInt64(children) << JSONTapeEntry.lengthShift, payload: UInt64(tapeCount))
        depth &-= 1
    }

    mutating func parseArray() throws(JSONParseError) {
        try enterContainer()
        let slot = reserveEntry()
        index &+= 1  // '['
        skipWhitespace()
        guard index < count else { throw endOfInput() }
        if base[index] == UInt8(ascii: "]") {
            index &+= 1
            close(slot, tag: JSONTapeEntry.arrayTag, children: 0)
            return
        }
        var elements = 0
        while true {
            try parseValue()
            elements &+= 1
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            let byte = base[index]
            if byte == UInt8(ascii: ",") {
                index &+= 1
                skipWhitespace()
            } else if byte == UInt8(ascii: "]") {
                index &+= 1
                close(slot, tag: JSONTapeEntry.arrayTag, children: elements)
                return
            } else {
                throw JSONParseError(offset: index, reason: "expected ',' or ']' after array element")
            }
        }
    }

    mutating func parseObject() throws(JSONParseError) {
        try enterContainer()
        let slot = reserveEntry()
        index &+= 1  // '{'
        skipWhitespace()
        guard index < count else { throw endOfInput() }
        if base[index] == UInt8(ascii: "}") {
            index &+= 1
            close(slot, tag: JSONTapeEntry.objectTag, children: 0)
            return
        }
        var members = 0
        while true {
            guard index < count else { throw endOfInput() }
            guard base[index] == UInt8(ascii: "\"") else {
                throw JSONParseError(offset: index, reason: "expected '\"' to start an object key")
            }
            index &+= 1
            try parseString()
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            guard base[index] == UInt8(ascii: ":") else {
                throw JSONParseError(offset: index, reason: "expected ':' after object key")
            }
            index &+= 1
            skipWhitespace()
            try parseValue()
            members &+= 1
            skipWhitespace()
            guard index < count else { throw endOfInput() }
            let byte = base[index]
            if byte == UInt8(ascii: ",") {
                index &+= 1
                skipWhitespace()
            } else if byte == UInt8(ascii: "}") {
                index &+= 1
                close(slot, tag: JSONTapeEntry.objectTag, children: members)
                return
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
