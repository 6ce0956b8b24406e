import NIOCore

/// Writes a `CastMessage` straight into a `ByteBuffer`: the hot encode path.
///
/// The bytes are SwiftProtobuf's (tests compare the two on fixed and random messages, and the
/// `frame` fuzz target on every message it decodes): fields in number order, every required field
/// present even when it holds its default; a protocol version outside the enum (0–3) goes last,
/// where SwiftProtobuf puts the unknown field that carries it. Before, each message built the
/// generated struct (copying four strings into its storage), walked it twice with SwiftProtobuf's
/// visitors (size, then bytes), and the frame encoder copied the body into a second buffer
/// behind the length prefix; ``frame(of:allocator:)`` writes prefix and body into one buffer.
enum CastMessageWireWriter {
    /// The serialized size of `message` (the frame's length prefix).
    static func bodySize(of message: CastMessage) -> Int {
        var size = 1 + varintSize(UInt64(message.protocolVersion))
        size += stringFieldSize(message.sourceID.utf8.count)
        size += stringFieldSize(message.destinationID.utf8.count)
        size += stringFieldSize(message.namespace.rawValue.utf8.count)
        size += 2   // payload_type: tag and a one-byte varint (0 or 1)
        size += stringFieldSize(message.payload.byteCount)
        if message.continued != nil { size += 2 }
        if let remaining = message.remainingLength { size += 1 + varintSize(UInt64(remaining)) }
        return size
    }

    /// The body alone.
    static func body(of message: CastMessage, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: bodySize(of: message))
        write(message, into: &buffer)
        return buffer
    }

    /// The whole frame: the 4-byte big-endian length `size` (from ``bodySize(of:)``), then the body.
    static func frame(of message: CastMessage, size: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: CastFrameLimits.headerSize + size)
        buffer.writeInteger(UInt32(size), endianness: .big)
        write(message, into: &buffer)
        return buffer
    }

    static func write(_ message: CastMessage, into buffer: inout ByteBuffer) {
        let knownVersion = message.protocolVersion <= 3
        if knownVersion { writeVarintField(1, UInt64(message.protocolVersion), into: &buffer) }
        writeStringField(2, message.sourceID, into: &buffer)
        writeStringField(3, message.destinationID, into: &buffer)
        writeStringField(4, message.namespace.rawValue, into: &buffer)
        switch message.payload {
        case .string(let text):
            writeVarintField(5, 0, into: &buffer)
            writeStringField(6, text, into: &buffer)
        case .binary(let bytes):
            writeVarintField(5, 1, into: &buffer)
            writeTag(7, wireType: 2, into: &buffer)
            writeVarint(UInt64(bytes.count), into: &buffer)
            buffer.writeBytes(bytes)
        }
        if let continued = message.continued { writeVarintField(8, continued ? 1 : 0, into: &buffer) }
        if let remaining = message.remainingLength { writeVarintField(9, UInt64(remaining), into: &buffer) }
        if !knownVersion { writeVarintField(1, UInt64(message.protocolVersion), into: &buffer) }
    }

    static func varintSize(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    /// Tag (one byte for fields 1–15), length varint, bytes.
    private static func stringFieldSize(_ count: Int) -> Int { 1 + varintSize(UInt64(count)) + count }

    private static func writeTag(_ field: Int, wireType: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(truncatingIfNeeded: field << 3 | wireType))
    }

    private static func writeVarint(_ value: UInt64, into buffer: inout ByteBuffer) {
        var value = value
        while value >= 0x80 {
            buffer.writeInteger(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.writeInteger(UInt8(value))
    }

    private static func writeVarintField(_ field: Int, _ value: UInt64, into buffer: inout ByteBuffer) {
        writeTag(field, wireType: 0, into: &buffer)
        writeVarint(value, into: &buffer)
    }

    private static func writeStringField(_ field: Int, _ text: String, into buffer: inout ByteBuffer) {
        writeTag(field, wireType: 2, into: &buffer)
        writeVarint(UInt64(text.utf8.count), into: &buffer)
        buffer.writeString(text)
    }
}
