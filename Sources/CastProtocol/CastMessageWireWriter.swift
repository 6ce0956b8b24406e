import NIOCore

/// Writes a `CastMessage` straight into a `ByteBuffer`: the hot encode path.
///
/// The bytes are SwiftProtobuf's (tests compare the two on fixed and random messages, and the
/// `frame` fuzz target on every message it decodes): fields in number order, every required field
/// present even when it holds its default; a protocol version outside the enum (0–3) goes last,
/// where SwiftProtobuf puts the unknown field that carries it. Before, each message built the
/// generated struct, walked it twice with SwiftProtobuf's visitors (size, then bytes) into a
/// buffer of its own, and the frame encoder copied that body into a second buffer behind the
/// length prefix; ``frame(of:size:allocator:)`` writes prefix and body into one buffer, the body
/// in one pass over raw memory (`castline-bench encode` compares the two).
enum CastMessageWireWriter {
    /// The serialized size of `message` (the frame's length prefix).
    static func bodySize(of message: CastMessage) -> Int {
        var size = 1 + ProtoWireSize.varint(UInt64(message.protocolVersion))
        size += ProtoWireSize.lengthDelimitedField(message.sourceID.utf8.count)
        size += ProtoWireSize.lengthDelimitedField(message.destinationID.utf8.count)
        size += ProtoWireSize.lengthDelimitedField(message.namespace.rawValue.utf8.count)
        size += 2   // payload_type: tag and a one-byte varint (0 or 1)
        size += ProtoWireSize.lengthDelimitedField(message.payload.byteCount)
        if message.continued != nil { size += 2 }
        if let remaining = message.remainingLength { size += 1 + ProtoWireSize.varint(UInt64(remaining)) }
        return size
    }

    /// The body alone.
    static func body(of message: CastMessage, allocator: ByteBufferAllocator) -> ByteBuffer {
        let size = bodySize(of: message)
        var buffer = allocator.buffer(capacity: size)
        write(message, size: size, into: &buffer)
        return buffer
    }

    /// The whole frame: the 4-byte big-endian length `size` (from ``bodySize(of:)``), then the body.
    static func frame(of message: CastMessage, size: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: CastFrameLimits.headerSize + size)
        buffer.writeInteger(UInt32(size), endianness: .big)
        write(message, size: size, into: &buffer)
        return buffer
    }

    /// Writes the `size` bytes of `message` (``bodySize(of:)``) in one pass over raw memory: one
    /// capacity and uniqueness check for the whole body instead of one per field and per byte.
    static func write(_ message: CastMessage, size: Int, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
            var out = RawWriter(base: raw.baseAddress!)
            let knownVersion = message.protocolVersion <= 3
            if knownVersion { out.varintField(1, UInt64(message.protocolVersion)) }
            out.stringField(2, message.sourceID)
            out.stringField(3, message.destinationID)
            out.stringField(4, message.namespace.rawValue)
            switch message.payload {
            case .string(let text):
                out.varintField(5, 0)
                out.stringField(6, text)
            case .binary(let bytes):
                out.varintField(5, 1)
                out.bytesField(7, bytes)
            }
            if let continued = message.continued { out.varintField(8, continued ? 1 : 0) }
            if let remaining = message.remainingLength { out.varintField(9, UInt64(remaining)) }
            if !knownVersion { out.varintField(1, UInt64(message.protocolVersion)) }
            precondition(out.count == size, "CastMessageWireWriter: wrote \(out.count) bytes, sized \(size)")
            return out.count
        }
    }

    /// A cursor over memory the caller sized with ``bodySize(of:)``.
    private struct RawWriter: ProtoWireOutput {
        let base: UnsafeMutableRawPointer
        var count = 0

        mutating func byte(_ value: UInt8) {
            base.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
            count += 1
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            (base + count).copyMemory(from: source, byteCount: bytes.count)
            count += bytes.count
        }
    }
}
