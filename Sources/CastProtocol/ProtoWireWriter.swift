/// Somewhere the protobuf binary format is written to, a byte at a time or a run of bytes. The
/// field encoders (tags, varints, length-delimited fields) come with it, written once for
/// ``CastMessageWireWriter``'s presized raw memory and for ``ProtoByteWriter``'s array.
public protocol ProtoWireOutput {
    mutating func byte(_ value: UInt8)
    mutating func append(_ bytes: UnsafeRawBufferPointer)
}

/// Always inlined: in ``CastMessageWireWriter`` (the hot encode path) the constant tags then fold
/// into single byte stores; without it the encode of a LOAD took ~6 % more instructions.
extension ProtoWireOutput {
    @inline(__always)
    public mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            byte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        byte(UInt8(value))
    }

    @inline(__always)
    public mutating func tag(_ field: UInt64, _ wireType: ProtoWireType) {
        varint(field << 3 | UInt64(wireType.rawValue))
    }

    @inline(__always)
    public mutating func varintField(_ field: UInt64, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    @inline(__always)
    public mutating func bytesField(_ field: UInt64, _ bytes: [UInt8]) {
        tag(field, .lengthDelimited)
        varint(UInt64(bytes.count))
        bytes.withUnsafeBytes { append($0) }
    }

    @inline(__always)
    public mutating func stringField(_ field: UInt64, _ text: String) {
        tag(field, .lengthDelimited)
        let utf8 = text.utf8
        varint(UInt64(utf8.count))
        if utf8.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) == nil {
            for unit in utf8 { byte(unit) }
        }
    }
}

/// Writes the protobuf binary format into a growing array: for small messages off the hot path
/// (device auth), where sizing every nested message first is not worth its code.
public struct ProtoByteWriter: ProtoWireOutput {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    public mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    /// A nested message in field `field`: written by `body`, then its length and bytes.
    public mutating func messageField(_ field: UInt64, _ body: (inout ProtoByteWriter) -> Void) {
        var nested = ProtoByteWriter()
        body(&nested)
        bytesField(field, nested.bytes)
    }
}

/// Sizes in the protobuf binary format.
public enum ProtoWireSize {
    public static func varint(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    /// A length-delimited field of `count` bytes with a one-byte tag (fields 1–15).
    public static func lengthDelimitedField(_ count: Int) -> Int { 1 + varint(UInt64(count)) + count }
}
