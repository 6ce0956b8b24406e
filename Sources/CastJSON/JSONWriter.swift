/// Compact JSON writer into a UTF-8 byte buffer (RFC 8259 escaping).
///
/// Never emits invalid JSON: non-finite doubles are written as `null`; strings are valid Unicode
/// by construction; control characters, `"` and `\` are escaped. Doubles use Swift's shortest
/// round-tripping form (`0.1`, `1.0`, `1e-07`), so a `.double` re-parses as the same `.double`.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null:
            writeASCII("null")
        case .bool(let flag):
            writeASCII(flag ? "true" : "false")
        case .int(let integer):
            write(integer: integer)
        case .double(let number):
            write(double: number)
        case .string(let text):
            write(string: text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                write(string: key)
                bytes.append(UInt8(ascii: ":"))
                write(member)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    @inline(__always)
    mutating func writeASCII(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func write(integer: Int64) {
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = integer.magnitude
        let firstDigit = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude != 0
        bytes[firstDigit...].reverse()
    }

    mutating func write(double: Double) {
        guard double.isFinite else {
            writeASCII("null")
            return
        }
        bytes.append(contentsOf: double.description.utf8)
    }

    mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { writeEscaped($0) }
        if done == nil {
            var copy = string
            copy.withUTF8 { writeEscaped($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for position in utf8.indices {
            let byte = utf8[position]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if position > runStart {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
            }
            runStart = position + 1
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            default:
                bytes.append(UInt8(ascii: "u"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(UInt8(ascii: "0"))
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0x0F))
            }
        }
        if utf8.count > runStart {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
    }
}

extension JSONWriter {
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
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
        return writer.bytes
    }
}
