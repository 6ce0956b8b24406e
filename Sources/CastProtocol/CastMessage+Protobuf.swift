import CastCore
import Foundation
import NIOCore
import SwiftProtobuf

/// Conversion between ``CastMessage`` and the generated proto2 type, and binary (de)serialization
/// straight from and into `ByteBuffer`.
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

    /// Decodes a frame body with the generated SwiftProtobuf type: the reference the fast path is
    /// checked against.
    public init(decodingWithSwiftProtobuf body: ByteBuffer) throws(CastMessageDecodingError) {
        let size = body.readableBytes
        let proto: Cast_Channel_CastMessage
        do {
            proto = try Cast_Channel_CastMessage(serializedBytes: ProtobufBytes(body), partial: true)
        } catch {
            throw .malformedProtobuf(byteCount: size, reason: String(describing: error))
        }
        try self.init(proto: proto, byteCount: size)
    }

    /// Builds the domain value from a generated message; `byteCount` is used in error reports.
    public init(proto: Cast_Channel_CastMessage, byteCount: Int = 0) throws(CastMessageDecodingError) {
        let version: UInt32
        if proto.hasProtocolVersion {
            version = UInt32(proto.protocolVersion.rawValue)
        } else if let raw = ProtobufUnknownFields.varint(field: 1, in: proto.unknownFields.data) {
            version = UInt32(truncatingIfNeeded: raw)
        } else {
            throw .missingRequiredField("protocol_version", byteCount: byteCount)
        }
        guard proto.hasSourceID else { throw .missingRequiredField("source_id", byteCount: byteCount) }
        guard proto.hasDestinationID else { throw .missingRequiredField("destination_id", byteCount: byteCount) }
        guard proto.hasNamespace else { throw .missingRequiredField("namespace", byteCount: byteCount) }
        let payload: Payload
        if proto.hasPayloadType {
            switch proto.payloadType {
            case .string:
                guard proto.hasPayloadUtf8 else { throw .missingRequiredField("payload_utf8", byteCount: byteCount) }
                payload = .string(proto.payloadUtf8)
            case .binary:
                guard proto.hasPayloadBinary else { throw .missingRequiredField("payload_binary", byteCount: byteCount) }
                payload = .binary([UInt8](proto.payloadBinary))
            }
        } else if let raw = ProtobufUnknownFields.varint(field: 5, in: proto.unknownFields.data) {
            throw .unsupportedPayloadType(UInt64(UInt32(truncatingIfNeeded: raw)), byteCount: byteCount)
        } else {
            throw .missingRequiredField("payload_type", byteCount: byteCount)
        }
        self.init(
            protocolVersion: version, sourceID: proto.sourceID, destinationID: proto.destinationID,
            namespace: CastNamespace(rawValue: proto.namespace), payload: payload,
            continued: proto.hasContinued ? proto.continued : nil,
            remainingLength: proto.hasRemainingLength ? proto.remainingLength : nil)
    }

    /// The generated message with every required field set (also when it holds the default value).
    public var proto: Cast_Channel_CastMessage {
        var m = Cast_Channel_CastMessage()
        if let known = Cast_Channel_CastMessage.ProtocolVersion(rawValue: Int(protocolVersion)) {
            m.protocolVersion = known
        } else {
            // Not in the enum: proto2 parsing keeps the raw varint field 1 in unknown fields,
            // which are serialized back as they are.
            try? m.merge(serializedBytes: ProtobufUnknownFields.encodeVarint(field: 1, UInt64(protocolVersion)), partial: true)
        }
        m.sourceID = sourceID
        m.destinationID = destinationID
        m.namespace = namespace.rawValue
        switch payload {
        case .string(let text):
            m.payloadType = .string
            m.payloadUtf8 = text
        case .binary(let bytes):
            m.payloadType = .binary
            m.payloadBinary = Data(bytes)
        }
        if let continued { m.continued = continued }
        if let remainingLength { m.remainingLength = remainingLength }
        return m
    }

    /// Serialized protobuf bytes (the frame body, without the length prefix), written by
    /// ``CastMessageWireWriter``.
    public func serializedBody() -> ByteBuffer {
        CastMessageWireWriter.body(of: self, allocator: ByteBufferAllocator())
    }

    /// The same bytes through the generated SwiftProtobuf type: the reference the wire writer is
    /// tested and fuzzed against (as ``init(decodingWithSwiftProtobuf:)`` is for the reader).
    public func serializedBodyWithSwiftProtobuf() -> ByteBuffer {
        // `partial: true`: required fields are always set above, except field 1 for unknown
        // versions, which travels in unknownFields.
        let bytes: ProtobufBytes = (try? proto.serializedBytes(partial: true)) ?? ProtobufBytes(ByteBuffer())
        return bytes.buffer
    }
}

/// A `ByteBuffer` that SwiftProtobuf can read from and serialize into without a copy.
struct ProtobufBytes: SwiftProtobufContiguousBytes {
    var buffer: ByteBuffer

    init(_ buffer: ByteBuffer) { self.buffer = buffer }
    init(repeating: UInt8, count: Int) { buffer = ByteBuffer(repeating: repeating, count: count) }
    init<S: Sequence>(_ sequence: S) where S.Element == UInt8 { buffer = ByteBuffer(bytes: Array(sequence)) }
    var count: Int { buffer.readableBytes }
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeReadableBytes(body)
    }
    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeMutableReadableBytes(body)
    }
}

/// Reads and writes single varint fields in raw protobuf bytes (unknown-field storage).
enum ProtobufUnknownFields {
    /// The last varint value of `field` in `data`, or nil.
    static func varint(field: Int, in data: Data) -> UInt64? {
        let bytes = [UInt8](data)
        var i = 0
        var found: UInt64?
        while i < bytes.count {
            guard let key = readVarint(bytes, &i) else { return found }
            let wireType = key & 7
            let number = Int(key >> 3)
            switch wireType {
            case 0:
                guard let value = readVarint(bytes, &i) else { return found }
                if number == field { found = value }
            case 1: i += 8
            case 2:
                guard let length = readVarint(bytes, &i), length <= UInt64(bytes.count - i) else { return found }
                i += Int(length)
            case 5: i += 4
            default: return found
            }
        }
        return found
    }

    static func encodeVarint(field: Int, _ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        func put(_ v: UInt64) {
            var v = v
            while v >= 0x80 {
                out.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        put(UInt64(field) << 3)
        put(value)
        return out
    }

    private static func readVarint(_ bytes: [UInt8], _ i: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count, shift < 64 {
            let b = bytes[i]
            i += 1
            value |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
