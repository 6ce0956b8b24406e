import CastCore
@testable import CastProtocol
import CastProtoReference
import CastTestSupport
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

    @Test("the wire writer writes SwiftProtobuf's bytes", arguments: samples)
    func writerMatchesSwiftProtobuf(message: CastMessage) {
        let written = Array(message.serializedBody().readableBytesView)
        #expect(written == Array(message.serializedBodyWithSwiftProtobuf().readableBytesView))
    }

    /// Random strings of every UTF-8 length class, binary payloads, lengths across the one- and
    /// two-byte varint boundary, the optional fields, versions inside and outside the enum.
    @Test("the wire writer matches SwiftProtobuf on 3,000 random messages and they decode back")
    func writerMatchesSwiftProtobufOnRandomMessages() throws {
        var rng = SplitMix64(seed: 0x5EED_CA57)
        let alphabet: [Character] = ["a", "Z", "0", "-", "\u{0}", "é", "✓", "𝄞", "\"", "\\"]
        func text(_ maxLength: Int) -> String {
            String((0..<Int.random(in: 0...maxLength, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! })
        }
        for _ in 0..<3_000 {
            let payload: CastMessage.Payload = Bool.random(using: &rng)
                ? .string(text(Bool.random(using: &rng) ? 40 : 300))
                : .binary((0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            let message = CastMessage(
                protocolVersion: [0, 1, 2, 3, 4, 127, 128, UInt32.max].randomElement(using: &rng)!,
                sourceID: text(20), destinationID: text(150), namespace: CastNamespace(rawValue: text(60)), payload: payload,
                continued: [nil, true, false].randomElement(using: &rng)!,
                remainingLength: [nil, 0, 127, 128, 16_384, UInt32.max].randomElement(using: &rng)!)
            let written = message.serializedBody()
            #expect(Array(written.readableBytesView) == Array(message.serializedBodyWithSwiftProtobuf().readableBytesView), "\(message)")
            #expect(try CastMessage(decoding: written) == message)
        }
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

/// The hot-path reader against the generated SwiftProtobuf decoder, on valid and hostile bodies.
@Suite struct CastMessageWireReaderTests {
    static func agree(_ bytes: [UInt8]) -> Bool {
        let body = ByteBuffer(bytes: bytes)
        let fast = Result { () throws(CastMessageDecodingError) in try CastMessage(decoding: body) }
        let reference = Result { () throws(CastMessageDecodingError) in try CastMessage(decodingWithSwiftProtobuf: body) }
        switch (fast, reference) {
        case (.success(let a), .success(let b)): return a == b
        case (.failure(.malformedProtobuf), .failure(.malformedProtobuf)): return true
        case (.failure(let a), .failure(let b)): return a == b
        default: return false
        }
    }

    @Test(arguments: CastMessageTests.samples)
    func agreesOnValidMessages(message: CastMessage) {
        #expect(Self.agree(Array(message.serializedBody().readableBytesView)))
    }

    static let base: [UInt8] = [0x08, 0x00, 0x12, 0x01, 0x61, 0x1A, 0x01, 0x62, 0x22, 0x01, 0x6E, 0x28, 0x00, 0x32, 0x02, 0x7B, 0x7D]

    /// Unknown groups nested 99, 100 and 101 deep: the reader's limit is SwiftProtobuf's.
    @Test(arguments: [99, 100, 101])
    func agreesOnGroupDepth(depth: Int) {
        let open = [UInt8](repeating: 0x73, count: depth), close = [UInt8](repeating: 0x74, count: depth)
        #expect(Self.agree(Self.base + open + close))
    }

    @Test(arguments: [
        base,                                                  // complete
        base + [0x78, 0x05],                                   // unknown varint field 15
        base + [0x7A, 0x02, 0x01, 0x02],                       // unknown length-delimited field 15
        base + [0x7D, 0x01, 0x02, 0x03, 0x04],                 // unknown fixed32
        base + [0x79, 1, 2, 3, 4, 5, 6, 7, 8],                 // unknown fixed64
        base + [0x12, 0x01, 0x63],                             // repeated source_id: last wins
        base + [0x08, 0x80, 0x80, 0x80, 0x80, 0x10],           // protocol_version beyond 32 bits
        base + [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // -1 as int32
        base + [0x40, 0x01, 0x48, 0x2A],                       // continued, remaining_length
        base + [0x41, 1, 2, 3, 4, 5, 6, 7, 8],                 // continued (field 8) as fixed64: an unknown field
        base + [0x73, 0x78, 0x05, 0x74],                       // unknown group 14 holding a varint
        base + [0x73, 0x7B, 0x7A, 0x01, 0x00, 0x7C, 0x74],     // nested unknown groups 14 { 15 { … } }
        base + [0x73, 0x78, 0x05],                             // group never closed
        base + [0x73, 0x7C],                                   // group 14 closed by end-group 15
        base + [0x74],                                         // end-group without a start
        base + [0x13, 0x14],                                   // source_id (field 2) as an empty group
        base + [0x10, 0x05],                                   // source_id (field 2) as a varint: an unknown field
        base + [0x0D, 1, 2, 3, 4],                             // protocol_version (field 1) as fixed32: an unknown field
        base + [0x32, 0x02, 0x5B, 0x5D] + [0x2A, 0x01, 0x00],  // payload_type (field 5) length-delimited: an unknown field
        Array(base.prefix(13)),                                // no payload_utf8
        Array(base.dropFirst(2)),                              // no protocol_version
        [0x08, 0x00, 0x12, 0x02, 0xC3, 0x28] + Array(base.dropFirst(5)),  // invalid UTF-8 in source_id
        base + [0x12, 0x05, 0x61],                             // truncated length
        base + [0x08],                                         // truncated varint
        base + [0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],  // 11-byte varint
        base + [0x78, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // 10-byte varint, bits past 64 dropped
        base + [0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // the same as protocol_version
        base + [0xC0, 0x80, 0x80, 0x80, 0x00, 0x01],           // continued (field 8) with a 5-byte tag
        base + [0xC0, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01],     // a 6-byte tag: too long for a message's field
        base + [0x73, 0xC0, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x74],  // but not inside an unknown group
        base + [0x0B],                                         // group start
        base + [0x00, 0x00],                                   // field number 0
        // Tags: SwiftProtobuf takes a tag below UInt32.max only (field numbers up to 2^29 - 1).
        base + [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x00],           // field 2^29 - 1, varint: the largest valid tag
        base + [0xFD, 0xFF, 0xFF, 0xFF, 0x0F, 1, 2, 3, 4],     // field 2^29 - 1, fixed32 (tag UInt32.max - 2)
        base + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F],                 // tag UInt32.max (field 2^29 - 1, wire type 7)
        base + [0x80, 0x80, 0x80, 0x80, 0x10, 0x00],           // tag 2^32: field 2^29, varint
        base + [0x8D, 0x8B, 0xB6, 0x91, 0x22, 0x3A, 0x30, 0x2C, 0x22],  // a 35-bit tag (fixed32), found by the frame fuzz target
        base + [0x73, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00, 0x74],  // a tag beyond 32 bits inside an unknown group
        [0x08, 0x00, 0x12, 0x01, 0x61, 0x1A, 0x01, 0x62, 0x22, 0x01, 0x6E, 0x28, 0x01, 0x3A, 0x00],  // empty binary
    ])
    func agreesOnEdgeCases(bytes: [UInt8]) {
        #expect(Self.agree(bytes))
    }
}

/// The wire reader's strings against the standard library's UTF-8 validation, on every 1–3 byte
/// sequence and on 4-byte boundaries: nil exactly when the bytes are not valid UTF-8, else the
/// same bytes (interned strings included).
@Suite struct WireReaderUTF8Tests {
    func stdlib(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }
    func ours(_ bytes: [UInt8]) -> Bool {
        guard let string = bytes.withUnsafeBytes({ CastMessageWireReader.utf8String($0) }) else { return false }
        #expect(Array(string.utf8) == bytes)
        return true
    }

    @Test func agreesWithTheStandardLibrary() {
        var checked = 0
        for a in 0...255 {
            #expect(ours([UInt8(a)]) == stdlib([UInt8(a)]))
            for b in 0...255 where a >= 0xC0 {
                let two = [UInt8(a), UInt8(b)]
                #expect(ours(two) == stdlib(two))
                if a >= 0xE0, b >= 0x80, b < 0xC0 {
                    for c in [0x00, 0x80, 0xBF, 0xC0] {
                        let three = two + [UInt8(c)]
                        #expect(ours(three) == stdlib(three))
                        for d in [0x80, 0xBF] where a >= 0xF0 {
                            let four = three + [UInt8(d)]
                            #expect(ours(four) == stdlib(four))
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked > 0)
        let long = Array("plain ascii text, then café ✓ 𝄞 and more ascii to cross eight-byte words".utf8)
        #expect(ours(long))
        #expect(!ours(long + [0xFF]))
        #expect(!ours(Array(long.prefix(20)) + [0xED, 0xA0, 0x80] + long))
        // A truncated 4-byte sequence becomes one U+FFFD (3 bytes): same length, other bytes.
        #expect(!ours(Array("abc".utf8) + [0xF0, 0x9F, 0x98]))
        #expect(ours(Array("urn:x-cast:com.google.cast.media".utf8)) && ours([]) && ours(Array("*".utf8)))
    }
}

