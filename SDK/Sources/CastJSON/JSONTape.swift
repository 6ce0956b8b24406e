/// One parsed JSON value (or object key) on the parser's tape: 16 bytes, trivial.
///
/// `header` holds the tag in bits 0–6, ``nonASCIIFlag`` in bit 7 and a length or child count
/// from bit 8 up. `payload` holds: the integer / double bits; for strings the byte offset into
/// the input (or, for ``escapedStringTag``, into the parser's scratch bytes); for containers the
/// tape index just past their last descendant (so a container is skipped in one step).
/// Containers are followed by their children in order; object members are key, value, key, …
@usableFromInline
struct JSONTapeEntry {
    @usableFromInline var header: UInt64
    @usableFromInline var payload: UInt64

    @inlinable @inline(__always)
    init(header: UInt64, payload: UInt64) {
        self.header = header
        self.payload = payload
    }

    @inlinable @inline(__always) static var nullTag: UInt64 { 0 }
    @inlinable @inline(__always) static var falseTag: UInt64 { 1 }
    @inlinable @inline(__always) static var trueTag: UInt64 { 2 }
    @inlinable @inline(__always) static var intTag: UInt64 { 3 }
    @inlinable @inline(__always) static var doubleTag: UInt64 { 4 }
    @inlinable @inline(__always) static var stringTag: UInt64 { 5 }
    @inlinable @inline(__always) static var escapedStringTag: UInt64 { 6 }
    @inlinable @inline(__always) static var arrayTag: UInt64 { 7 }
    @inlinable @inline(__always) static var objectTag: UInt64 { 8 }
    /// Strings: the bytes may contain non-ASCII (set for every escaped string).
    @inlinable @inline(__always) static var nonASCIIFlag: UInt64 { 0x80 }
    @inlinable @inline(__always) static var lengthShift: UInt64 { 8 }

    @inlinable @inline(__always) var tag: UInt64 { header & 0x7F }
    /// String byte length or container child count.
    @inlinable @inline(__always) var length: Int { Int(truncatingIfNeeded: header >> Self.lengthShift) }
    @inlinable @inline(__always) var isASCII: Bool { header & Self.nonASCIIFlag == 0 }
}

/// Everything a ``JSONTapeValue`` needs to read a parsed document; lives on the stack of
/// ``JSONParser/withDocument(_:_:)`` for as long as the tape does.
@usableFromInline
struct JSONTapeDocument {
    @usableFromInline let tape: UnsafePointer<JSONTapeEntry>
    @usableFromInline let input: UnsafePointer<UInt8>
    @usableFromInline let scratch: UnsafePointer<UInt8>?
    @usableFromInline let table: JSONStringTable

    @usableFromInline
    init(tape: UnsafePointer<JSONTapeEntry>, input: UnsafePointer<UInt8>, scratch: UnsafePointer<UInt8>?, table: JSONStringTable) {
        self.tape = tape
        self.input = input
        self.scratch = scratch
        self.table = table
    }

    /// The bytes of the string entry at `position`.
    @inlinable @inline(__always)
    func stringBytes(_ entry: JSONTapeEntry) -> UnsafePointer<UInt8> {
        if entry.tag == JSONTapeEntry.stringTag { return input + Int(truncatingIfNeeded: entry.payload) }
        // Escaped strings always have at least the escape's byte in scratch, unless empty.
        guard let scratch else { return input }
        return scratch + Int(truncatingIfNeeded: entry.payload)
    }

    /// The string entry at `position` as a `String` (interned when it is a well-known one).
    @inlinable @inline(__always)
    func string(at position: Int) -> String {
        let entry = tape[position]
        let start = stringBytes(entry)
        let length = entry.length
        if let known = table.lookup(start, length) { return known }
        return String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self)
    }

    /// The tape index after the value at `position` (and all its descendants).
    @inlinable @inline(__always)
    func skip(_ position: Int) -> Int {
        let entry = tape[position]
        return entry.tag >= JSONTapeEntry.arrayTag ? Int(truncatingIfNeeded: entry.payload) : position &+ 1
    }

    /// Builds the `JSONValue` tree of the value at `position`.
    @usableFromInline
    func materialize(_ position: Int) -> JSONValue {
        let entry = tape[position]
        switch entry.tag {
        case JSONTapeEntry.nullTag: return .null
        case JSONTapeEntry.falseTag: return .bool(false)
        case JSONTapeEntry.trueTag: return .bool(true)
        case JSONTapeEntry.intTag: return .int(Int64(bitPattern: entry.payload))
        case JSONTapeEntry.doubleTag: return .double(Double(bitPattern: entry.payload))
        case JSONTapeEntry.stringTag, JSONTapeEntry.escapedStringTag: return .string(string(at: position))
        case JSONTapeEntry.arrayTag:
            let count = entry.length
            guard count > 0 else { return .array([]) }
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            var child = position &+ 1
            for _ in 0..<count {
                elements.append(materialize(child))
                child = skip(child)
            }
            return .array(elements)
        default:
            let count = entry.length
            guard count > 0 else { return .object(JSONObject()) }
            var members: [JSONObject.Member] = []
            members.reserveCapacity(count)
            var child = position &+ 1
            for _ in 0..<count {
                members.append(JSONObject.Member(key: string(at: child), value: materialize(child &+ 1)))
                child = skip(child &+ 1)
            }
            return .object(JSONObject(members: members))
        }
    }
}

/// A borrowed view of one value of a parsed document (valid only inside
/// ``JSONParser/withDocument(_:_:)``). The payload models decode from it exactly as from a
/// ``JSONValue`` (same code, see ``JSONDecodingSource``) without building the tree.
@usableFromInline package struct JSONTapeValue {
    @usableFromInline let document: UnsafePointer<JSONTapeDocument>
    @usableFromInline let position: Int

    @inlinable @inline(__always)
    init(document: UnsafePointer<JSONTapeDocument>, position: Int) {
        self.document = document
        self.position = position
    }

    @inlinable @inline(__always)
    var entry: JSONTapeEntry { document.pointee.tape[position] }
}

extension JSONTapeValue: JSONDecodingSource {
    @inlinable @inline(__always)
    package var isNull: Bool { entry.tag == JSONTapeEntry.nullTag }

    @usableFromInline
    package var jsonValue: JSONValue { document.pointee.materialize(position) }

    @inlinable @inline(__always)
    package var objectMembers: JSONTapeObject? {
        let entry = entry
        guard entry.tag == JSONTapeEntry.objectTag else { return nil }
        return JSONTapeObject(document: document, position: position, count: entry.length)
    }

    @inlinable @inline(__always)
    package func arrayElements() -> JSONTapeElements? {
        let entry = entry
        guard entry.tag == JSONTapeEntry.arrayTag else { return nil }
        return JSONTapeElements(document: document, position: position, count: entry.length)
    }

    @inlinable @inline(__always)
    package var scalar: JSONScalar {
        let entry = entry
        switch entry.tag {
        case JSONTapeEntry.nullTag: return .null
        case JSONTapeEntry.falseTag: return .bool(false)
        case JSONTapeEntry.trueTag: return .bool(true)
        case JSONTapeEntry.intTag: return .int(Int64(bitPattern: entry.payload))
        case JSONTapeEntry.doubleTag: return .double(Double(bitPattern: entry.payload))
        case JSONTapeEntry.stringTag, JSONTapeEntry.escapedStringTag: return .string
        default: return .container
        }
    }

    @inlinable @inline(__always)
    package var stringValue: String? {
        switch entry.tag {
        case JSONTapeEntry.stringTag, JSONTapeEntry.escapedStringTag: return document.pointee.string(at: position)
        default: return nil
        }
    }
}

/// A key on the tape: its bytes (in the input, or decoded in scratch when it had escapes),
/// compared without building a `String`.
@usableFromInline package struct JSONTapeKey: JSONMemberKey {
    @usableFromInline let document: UnsafePointer<JSONTapeDocument>
    @usableFromInline let position: Int
    @usableFromInline let bytes: UnsafePointer<UInt8>
    @usableFromInline let count: Int

    @inlinable @inline(__always)
    init(document: UnsafePointer<JSONTapeDocument>, position: Int) {
        self.document = document
        self.position = position
        let entry = document.pointee.tape[position]
        bytes = document.pointee.stringBytes(entry)
        count = entry.length
    }

    @inlinable @inline(__always)
    package func equals(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { nameBytes in
            count == nameBytes.count && memcmpBytes(bytes, nameBytes.baseAddress.unsafelyUnwrapped, count)
        }
    }

    @inlinable @inline(__always)
    package var string: String { document.pointee.string(at: position) }
}

/// The members of an object on the tape, in order; keys are ``JSONTapeKey``s.
@usableFromInline package struct JSONTapeObject: JSONDecodingObject {
    @usableFromInline package typealias MemberKey = JSONTapeKey
    @usableFromInline package typealias MemberValue = JSONTapeValue

    @usableFromInline let document: UnsafePointer<JSONTapeDocument>
    @usableFromInline let position: Int
    @usableFromInline let count: Int

    @inlinable @inline(__always)
    init(document: UnsafePointer<JSONTapeDocument>, position: Int, count: Int) {
        self.document = document
        self.position = position
        self.count = count
    }

    @usableFromInline package struct Iterator: IteratorProtocol {
        @usableFromInline let document: UnsafePointer<JSONTapeDocument>
        @usableFromInline var position: Int
        @usableFromInline var remaining: Int

        @inlinable @inline(__always)
        init(document: UnsafePointer<JSONTapeDocument>, position: Int, remaining: Int) {
            self.document = document
            self.position = position
            self.remaining = remaining
        }

        @inlinable @inline(__always)
        package mutating func next() -> (key: JSONTapeKey, value: JSONTapeValue)? {
            guard remaining > 0 else { return nil }
            remaining &-= 1
            let keyPosition = position
            position = document.pointee.skip(keyPosition &+ 1)
            return (key: JSONTapeKey(document: document, position: keyPosition), value: JSONTapeValue(document: document, position: keyPosition &+ 1))
        }
    }

    @inlinable @inline(__always)
    package func makeIterator() -> Iterator { Iterator(document: document, position: position &+ 1, remaining: count) }

    @inlinable @inline(__always)
    package var underestimatedCount: Int { count }
}

/// The elements of an array on the tape, in order.
@usableFromInline package struct JSONTapeElements: Sequence {
    @usableFromInline let document: UnsafePointer<JSONTapeDocument>
    @usableFromInline let position: Int
    @usableFromInline let count: Int

    @inlinable @inline(__always)
    init(document: UnsafePointer<JSONTapeDocument>, position: Int, count: Int) {
        self.document = document
        self.position = position
        self.count = count
    }

    @usableFromInline package struct Iterator: IteratorProtocol {
        @usableFromInline let document: UnsafePointer<JSONTapeDocument>
        @usableFromInline var position: Int
        @usableFromInline var remaining: Int

        @inlinable @inline(__always)
        init(document: UnsafePointer<JSONTapeDocument>, position: Int, remaining: Int) {
            self.document = document
            self.position = position
            self.remaining = remaining
        }

        @inlinable @inline(__always)
        package mutating func next() -> JSONTapeValue? {
            guard remaining > 0 else { return nil }
            remaining &-= 1
            let current = position
            position = document.pointee.skip(current)
            return JSONTapeValue(document: document, position: current)
        }
    }

    @inlinable @inline(__always)
    package func makeIterator() -> Iterator { Iterator(document: document, position: position &+ 1, remaining: count) }

    @inlinable @inline(__always)
    package var underestimatedCount: Int { count }
}
