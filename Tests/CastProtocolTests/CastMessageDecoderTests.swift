import CastCore
@testable import CastProtocol
import NIOCore
import Testing

/// `CastMessageDecoder` reuses the previous message's source / destination strings when the bytes
/// repeat them; every result must still equal `CastMessage(decoding:)`'s.
@Suite struct CastMessageDecoderTests {
    static func body(source: String, destination: String, payload: String = #"{"type":"PING"}"#) -> ByteBuffer {
        CastMessage(sourceID: source, destinationID: destination, namespace: .heartbeat, payload: .string(payload)).serializedBody()
    }

    @Test func sameResultsAsDecodingEachBodyAlone() throws {
        let uuid = "9f0c1a2e-7d1e-4c55-9d1f-31ab5d0e7c11"
        // Repeats, a one-byte change at the start, the middle and the end, other lengths, empty,
        // non-ASCII, and back.
        let sources = [uuid, uuid, "8f0c1a2e-7d1e-4c55-9d1f-31ab5d0e7c11", "9f0c1a2e-7d1e-4c55-9d1f-31ab5d0e7c12",
                       "9f0c1a2e-7d1e-4c55-9e1f-31ab5d0e7c11", uuid, "web-5", "web-5", "web-6", "", "", "réceiver-0",
                       "réceiver-0", "receiver-0", uuid]
        var decoder = CastMessageDecoder()
        for (index, source) in sources.enumerated() {
            let destination = index % 3 == 0 ? "sender-castline-0001" : "sender-castline-0002"
            let body = Self.body(source: source, destination: destination)
            let decoded = try decoder.decode(body)
            #expect(decoded == (try CastMessage(decoding: body)))
            #expect(decoded.sourceID == source)
            #expect(decoded.destinationID == destination)
        }
    }

    @Test func invalidUTF8IsStillRefusedAfterAValidId() throws {
        var decoder = CastMessageDecoder()
        _ = try decoder.decode(Self.body(source: "ab", destination: "cd"))
        // source_id = [0x61, 0xFF]: the same length as "ab", not valid UTF-8.
        let bytes: [UInt8] = [0x08, 0x00, 0x12, 0x02, 0x61, 0xFF, 0x1A, 0x02, 0x63, 0x64, 0x22, 0x01, 0x6E, 0x28, 0x00, 0x32, 0x00]
        #expect(throws: CastMessageDecodingError.self) { try decoder.decode(ByteBuffer(bytes: bytes)) }
        #expect(throws: CastMessageDecodingError.self) { try CastMessage(decoding: ByteBuffer(bytes: bytes)) }
        // And the decoder goes on.
        #expect(try decoder.decode(Self.body(source: "ab", destination: "cd")).sourceID == "ab")
    }
}
