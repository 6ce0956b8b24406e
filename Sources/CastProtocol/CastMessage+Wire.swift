import CastCore
import NIOCore

/// ``CastMessage`` in the protobuf binary format, straight from and into `ByteBuffer`
/// (``CastMessageWireReader``, ``CastMessageWireWriter``).
extension CastMessage {
    /// Decodes a frame body (the hot path, see ``CastMessageWireReader``). Required fields are
    /// checked with the field's name in the error; a `protocol_version` outside the enum is kept.
    public init(decoding body: ByteBuffer) throws(CastMessageDecodingError) {
        try self.init(decoding: body, reusableSource: nil, reusableDestination: nil)
    }

    /// Decodes a frame body; a `source_id` / `destination_id` with the bytes of
    /// `reusableSource` / `reusableDestination` becomes that string (see ``CastMessageDecoder``).
    init(decoding body: ByteBuffer, reusableSource: String?, reusableDestination: String?) throws(CastMessageDecodingError) {
        let size = body.readableBytes
        // Built inside the closure, moving each field out of the reader's result: no copies
        // (retain + release) of the strings on the way.
        let result: Result<CastMessage, CastMessageDecodingError> = body.withUnsafeReadableBytes { raw in
            do throws(CastMessageDecodingError) {
                let fields = try CastMessageWireReader.read(raw, reusableSource: reusableSource, reusableDestination: reusableDestination)
                return .success(try CastMessage(fields: fields, byteCount: size))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// The message from the wire reader's fields, checking proto2's required fields.
    private init(fields f: consuming CastMessageWireReader.Fields, byteCount size: Int) throws(CastMessageDecodingError) {
        guard let version = f.protocolVersion else { throw .missingRequiredField("protocol_version", byteCount: size) }
        guard let source = f.sourceID.take() else { throw .missingRequiredField("source_id", byteCount: size) }
        guard let destination = f.destinationID.take() else { throw .missingRequiredField("destination_id", byteCount: size) }
        guard let namespace = f.namespace.take() else { throw .missingRequiredField("namespace", byteCount: size) }
        guard let payloadType = f.payloadType else { throw .missingRequiredField("payload_type", byteCount: size) }
        let payload: Payload
        switch UInt32(truncatingIfNeeded: payloadType) {
        case 0:
            guard let text = f.payloadUTF8.take() else { throw .missingRequiredField("payload_utf8", byteCount: size) }
            payload = .string(text)
        case 1:
            guard let bytes = f.payloadBinary.take() else { throw .missingRequiredField("payload_binary", byteCount: size) }
            payload = .binary(bytes)
        default:
            throw .unsupportedPayloadType(UInt64(UInt32(truncatingIfNeeded: payloadType)), byteCount: size)
        }
        self.init(
            protocolVersion: UInt32(truncatingIfNeeded: version), sourceID: source, destinationID: destination,
            namespace: CastNamespace(rawValue: namespace), payload: payload,
            continued: f.continued, remainingLength: f.remainingLength)
    }

    /// Serialized protobuf bytes (the frame body, without the length prefix), written by
    /// ``CastMessageWireWriter``.
    public func serializedBody() -> ByteBuffer {
        CastMessageWireWriter.body(of: self, allocator: ByteBufferAllocator())
    }
}
