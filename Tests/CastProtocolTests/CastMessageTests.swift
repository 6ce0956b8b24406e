import CastCore
import CastProtocol
import NIOCore
import SwiftProtobuf
import Testing

@Suite struct CastMessageTests {
    static let samples: [CastMessage] = [
        CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .heartbeat, payload: .string(#"{"type":"PING"}"#)),
        CastMessage(protocolVersion: 2, sourceID: "receiver-0", destinationID: "*", namespace: .receiver,
                    payload: .string(#"{"type":"RECEIVER_STATUS","requestId":0,"status":{"applications":[]}}"#)),
        CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
                    payload: .binary((0...255).map(UInt8.init) + [0xC3, 0x28, 0x00, 0xFF])),
        CastMessage(sourceID: "sender-vlc", destinationID: "9f0c1a2e-7d1e-4c55-9d1f-31ab5d0e7c11",
                    namespace: "urn:x-cast:com.example.custom", payload: .string("héllo ✓ \u{0}"), continued: true, remainingLength: 42),
        CastMessage(protocolVersion: 7, sourceID: "s", destinationID: "d", namespace: .media, payload: .string("{}")),
        CastMessage(protocolVersion: 0, sourceID: "", destinationID: "", namespace: "", payload: .string("")),
        CastMessage(sourceID: "s", destinationID: "d", namespace: .media, payload: .binary([])),
    ]

    @Test(arguments: samples)
    func roundTripsThroughProtobuf(message: CastMessage) throws {
        let decoded = try CastMessage(decoding: message.serializedBody())
        #expect(decoded == message)
    }

    @Test func requiredFieldsAreEncodedEvenWhenDefault() throws {
        let empty = CastMessage(protocolVersion: 0, sourceID: "", destinationID: "", namespace: "", payload: .string(""))
        let bytes = Array(empty.serializedBody().readableBytesView)
        // field 1 varint 0, field 2 "", field 3 "", field 4 "", field 5 varint 0, field 6 "".
        #expect(bytes == [0x08, 0x00, 0x12, 0x00, 0x1A, 0x00, 0x22, 0x00, 0x28, 0x00, 0x32, 0x00])
        // And a strict proto2 parser (partial: false) accepts it.
        let strict = try Cast_Channel_CastMessage(serializedBytes: bytes)
        #expect(strict.isInitialized)
    }

    @Test func unknownProtocolVersionSurvivesBothWays() throws {
        let bytes = Array(CastMessage(protocolVersion: 7, sourceID: "a", destinationID: "b", namespace: "n", payload: .string("")).serializedBody().readableBytesView)
        #expect(bytes.starts(with: [0x08, 0x07]) || bytes.contains(0x07))
        let decoded = try CastMessage(decoding: ByteBuffer(bytes: bytes))
        #expect(decoded.protocolVersion == 7)
    }

    @Test func missingRequiredFieldsAreNamed() throws {
        var proto = CastMessage.samples0.proto
        proto.clearSourceID()
        let body = try ByteBuffer(bytes: proto.serializedBytes(partial: true) as [UInt8])
        #expect(throws: CastMessageDecodingError.missingRequiredField("source_id", byteCount: body.readableBytes)) {
            try CastMessage(decoding: body)
        }
        var noPayload = CastMessage.samples0.proto
        noPayload.clearPayloadUtf8()
        let body2 = try ByteBuffer(bytes: noPayload.serializedBytes(partial: true) as [UInt8])
        #expect(throws: CastMessageDecodingError.missingRequiredField("payload_utf8", byteCount: body2.readableBytes)) {
            try CastMessage(decoding: body2)
        }
    }

    @Test func unsupportedPayloadTypeIsTyped() throws {
        // protocol 0, source "a", dest "b", namespace "n", payload_type 5.
        let bytes: [UInt8] = [0x08, 0x00, 0x12, 0x01, 0x61, 0x1A, 0x01, 0x62, 0x22, 0x01, 0x6E, 0x28, 0x05]
        #expect(throws: CastMessageDecodingError.unsupportedPayloadType(5, byteCount: bytes.count)) {
            try CastMessage(decoding: ByteBuffer(bytes: bytes))
        }
    }

    @Test func garbageIsMalformed() {
        #expect {
            try CastMessage(decoding: ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))
        } throws: { error in
            if case .malformedProtobuf(5, _)? = error as? CastMessageDecodingError { return true }
            return false
        }
    }
}

extension CastMessage {
    static let samples0 = CastMessageTests.samples[0]
}
