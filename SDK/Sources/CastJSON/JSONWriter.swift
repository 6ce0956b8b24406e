/// Compact JSON writer into a growable UTF-8 byte buffer (RFC 8259 escaping): castline's one
/// JSON writer and string escaper (payloads, plugin messages, the JSON log sink, console lines).
///
/// Never emits invalid JSON through ``write(_:)``: non-finite doubles are written as `null`;
/// strings are valid Unicode by construction; control characters, `"` and `\` are escaped
/// (`\b \f \n \r \t`, the others as `\u00xx`). Doubles use Swift's shortest round-tripping form
/// (`0.1`, `1.0`, `1e-07`), so a `.double` re-parses as the same `.double`.
///
/// Not copyable; owns its buffer. Every append checks the capacity once, so building a record
/// costs no per-byte checks. Single-threaded: one owner at a time.
public struct JSONWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    @usableFromInline var written = 0

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 128) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written so far; valid until the next append.
    @inlinable
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: written) }

    /// Bytes written so far.
    @inlinable
    public var count: Int { written }

    /// Forgets the bytes written, keeping the buffer.
    @inlinable
    public mutating func removeAll() { written = 0 }

    /// Makes room for `n` more bytes.
    @inlinable @inline(__always)
    public mutating func reserve(_ n: Int) {
        if written &+ n > capacity { grow(written &+ n) }
    }

    @usableFromInline
    mutating func grow(_ needed: Int) {
        var newCapacity = capacity &* 2
        while newCapacity < needed { newCapacity &*= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: base, count: written)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }

    // MARK: - Raw bytes

    /// Appends one byte as is.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[written] = byte
        written &+= 1
    }

    /// Appends bytes as they are (no escaping).
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + written).copyMemory(from: source, byteCount: bytes.count)
        written &+= bytes.count
    }

    /// Appends a literal as is (JSON punctuation, keys known to need no escape).
    @inlinable @inline(__always)
    public mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends a string's UTF-8 as is (no escaping).
    public mutating func append(contentsOf text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Values

    /// Appends the compact JSON text of `value`.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            append("null")
        case .bool(let flag):
            append(flag ? "true" : "false")
        case .int(let integer):
            write(integer: integer)
        case .double(let number):
            write(double: number)
        case .string(let text):
            write(string: text)
        case .array(let elements):
            append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { append(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            append(UInt8(ascii: "]"))
        case .object(let object):
            append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { append(UInt8(ascii: ",")) }
                first = false
                write(string: key)
                append(UInt8(ascii: ":"))
                write(member)
            }
            append(UInt8(ascii: "}"))
        }
    }

    /// A signed integer in decimal.
    @inlinable
    public mutating func write(integer: Int64) {
        if integer < 0 { append(UInt8(ascii: "-")) }
        write(unsigned: integer.magnitude)
    }

    /// An unsigned integer in decimal, zero-padded to at least `minimumDigits` digits.
    @inlinable
    public mutating func write(unsigned value: UInt64, minimumDigits: Int = 1) {
        let digits = Swift.max(Self.decimalDigits(value), Swift.min(minimumDigits, 32))
        reserve(digits)
        let start = base + written
        written &+= digits
        // Two digits per division, from the last digit back.
        var rest = value
        var position = digits
        while position >= 2 {
            UnsafeMutableRawPointer(start + (position &- 2)).copyMemory(
                from: Self.digitPairs.utf8Start + Int(truncatingIfNeeded: rest % 100) &* 2, byteCount: 2)
            rest /= 100
            position &-= 2
        }
        if position == 1 { start[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest) }
    }

    /// How many decimal digits `value` has (1…20): a few compares, no loop.
    @inlinable
    static func decimalDigits(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        if rest >= 10_000_000_000_000_000 {
            digits &+= 16
            rest /= 10_000_000_000_000_000
        }
        if rest >= 100_000_000 {
            digits &+= 8
            rest /= 100_000_000
        }
        if rest >= 10_000 {
            digits &+= 4
            rest /= 10_000
        }
        if rest >= 100 {
            digits &+= 2
            rest /= 100
        }
        if rest >= 10 { digits &+= 1 }
        return digits
    }

    /// "00" to "99".
    @inlinable
    static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// A finite double in its shortest round-tripping form; NaN and ±infinity as `null`.
    public mutating func write(double: Double) {
        guard double.isFinite else {
            append("null")
            return
        }
        append(contentsOf: double.description)
    }

    /// A JSON string literal: quotes around, escapes inside.
    public mutating func write(string: String) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { write(string: $0) }
        if done == nil {
            var copy = string
            copy.withUTF8 { write(string: $0) }
        }
    }

    /// A JSON string literal of UTF-8 bytes: quotes around, escapes inside.
    @inlinable @inline(__always)
    public mutating func write(string utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count &* 6 &+ 2)
        base[written] = UInt8(ascii: "\"")
        written &+= 1
        appendEscaped(utf8, quotesAndBackslashes: true)
        base[written] = UInt8(ascii: "\"")
        written &+= 1
    }

    /// UTF-8 bytes with escapes, without quotes around. `quotesAndBackslashes: false` escapes the
    /// control characters only: text meant to be read on one line (console records).
    @inlinable
    public mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, quotesAndBackslashes: Bool = true) {
        reserve(utf8.count &* 6)
        appendEscaped(utf8, quotesAndBackslashes: quotesAndBackslashes)
    }

    /// The escaper. The caller reserved 6 bytes per input byte: runs of bytes that need no
    /// escape are copied a word at a time (``JSONBytes/copyPlain(_:_:_:quotesAndBackslashes:)``),
    /// each byte that does becomes its escape.
    @inlinable @inline(__always)
    mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, quotesAndBackslashes: Bool) {
        guard let source = utf8.baseAddress else { return }
        let length = utf8.count
        var position = 0
        while true {
            let plain = JSONBytes.copyPlain(base + written, source + position, length &- position,
                                            quotesAndBackslashes: quotesAndBackslashes)
            written &+= plain
            position &+= plain
            guard position < length else { return }
            appendEscape(source[position])
            position &+= 1
        }
    }

    /// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx`; capacity already reserved.
    @inlinable @inline(__always)
    mutating func appendEscape(_ byte: UInt8) {
        let target = base + written
        target[0] = UInt8(ascii: "\\")
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""): short = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): short = UInt8(ascii: "\\")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        default:
            target[1] = UInt8(ascii: "u")
            target[2] = UInt8(ascii: "0")
            target[3] = UInt8(ascii: "0")
            target[4] = JSONBytes.hexDigit(byte >> 4)
            target[5] = JSONBytes.hexDigit(byte & 0x0F)
            written &+= 6
            return
        }
        target[1] = short
        written &+= 2
    }
}

extension JSONValue {
    /// The compact JSON text: no insignificant whitespace, object keys in stored order,
    /// RFC 8259 escaping, NaN and ±infinity written as `null`.
    ///
    /// Pure function, thread-safe. Output re-parses to an equal value (except non-finite doubles).
    public func serialized() -> String {
        var writer = JSONWriter()
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The compact JSON text as UTF-8 bytes; see ``serialized()``.
    public func serializedBytes() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return Array(writer.bytes)
    }
}
