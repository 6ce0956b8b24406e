import CastCore
import CastProtocol
import Foundation
import NIOCore
import SwiftProtobuf

/// ``CastMessage`` through the generated SwiftProtobuf type: the reference that
/// ``CastMessage/init(decoding:)`` and ``CastMessage/serializedBody()`` (the hand-written wire
/// reader and writer) are tested, fuzzed and benchmarked against.
extension CastMessage {
    /// Decodes a frame body with the generated type.
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
    package init(proto: Cast_Channel_CastMessage, byteCount: Int = 0) throws(CastMessageDecodingError) {
        let version: UInt32
        if proto.hasProtocolVersion {
            version = UInt32(proto.protocolVersion.rawValue)
        } else if let raw = UnknownFields.lastVarint(field: 1, in: proto.unknownFields.data) {
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
        } else if let raw = UnknownFields.lastVarint(field: 5, in: proto.unknownFields.data) {
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
    package var proto: Cast_Channel_CastMessage {
        var m = Cast_Channel_CastMessage()
        if let known = Cast_Channel_CastMessage.ProtocolVersion(rawValue: Int(protocolVersion)) {
            m.protocolVersion = known
        } else {
            // Not in the enum: proto2 parsing keeps the raw varint field 1 in unknown fields,
            // which are serialized back as they are.
            var field = ProtoByteWriter()
            field.varintField(1, UInt64(protocolVersion))
            try? m.merge(serializedBytes: field.bytes, partial: true)
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

    /// The frame body through the generated type.
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

/// Varint fields in a generated message's unknown-field bytes: where proto2 keeps an enum value
/// outside the enum, which the generated types do not expose otherwise. SwiftProtobuf stored
/// those bytes after reading them, so they are well formed.
package enum UnknownFields {
    /// The varint values of `field`, in order, outside groups.
    package static func varints(field: UInt64, in data: Data) -> [UInt64] {
        [UInt8](data).withUnsafeBytes { raw in
            var reader = ProtoWireReader(raw)
            var values: [UInt64] = []
            while !reader.isAtEnd {
                guard let tag = try? reader.tag() else { break }
                if tag == ProtoTag(field: field, wireType: .varint) {
                    guard let value = try? reader.varint() else { break }
                    values.append(value)
                } else if (try? reader.skip(tag)) == nil {
                    break
                }
            }
            return values
        }
    }

    static func lastVarint(field: UInt64, in data: Data) -> UInt64? { varints(field: field, in: data).last }
}
