import CastDeviceAuth
import CastProtoReference
import CastProtocol
import CastTestSupport
import SwiftProtobuf
import Testing

/// The hand-written device-auth codec against the generated SwiftProtobuf types, both ways.
@Suite("Device-auth message codec")
struct DeviceAuthMessageCodecTests {
    static let samples: [DeviceAuthMessage] = [
        DeviceAuthMessage(),
        DeviceAuthMessage(challenge: AuthChallenge()),
        DeviceAuthMessage(challenge: AuthChallenge(senderNonce: [])),
        DeviceAuthMessage(challenge: AuthChallenge(signatureAlgorithm: .rsassaPKCS1v15, senderNonce: Array(0..<16), hashAlgorithm: .sha256)),
        DeviceAuthMessage(challenge: AuthChallenge(signatureAlgorithm: .unspecified, hashAlgorithm: .sha1)),
        DeviceAuthMessage(response: AuthResponse(signature: [], clientAuthCertificate: [])),
        DeviceAuthMessage(response: AuthResponse(
            signature: Array(repeating: 0x5A, count: 256), clientAuthCertificate: Array(0...255),
            intermediateCertificates: [Array(repeating: 1, count: 127), [], Array(repeating: 2, count: 128)],
            signatureAlgorithm: .rsassaPSS, senderNonce: [9, 8, 7], hashAlgorithm: .sha1, crl: [0xFF])),
        DeviceAuthMessage(error: AuthError(errorType: .internalError)),
        DeviceAuthMessage(error: AuthError(errorType: .noTLS)),
        DeviceAuthMessage(error: AuthError(errorType: .signatureAlgorithmUnavailable)),
        DeviceAuthMessage(challenge: AuthChallenge(hashAlgorithm: .sha256),
                          response: AuthResponse(signature: [1], clientAuthCertificate: [2], intermediateCertificates: [[3]]),
                          error: AuthError(errorType: .noTLS)),
    ]

    @Test("the codec writes SwiftProtobuf's bytes, and each side reads the other's", arguments: samples)
    func samplesMatch(message: DeviceAuthMessage) throws {
        try Self.expectSameBytesAndRoundTrips(message)
    }

    @Test("2,000 random messages: same bytes, and each side reads the other's")
    func randomMessagesMatch() throws {
        var rng = SplitMix64(seed: 0xDE71_CE00_A117)
        for _ in 0..<2_000 {
            try Self.expectSameBytesAndRoundTrips(Self.randomMessage(&rng))
        }
    }

    @Test("exact bytes: optional fields only when set, required ones always, fields in order")
    func exactBytes() throws {
        #expect(DeviceAuthMessage(challenge: AuthChallenge()).serialized() == [0x0A, 0x00])
        #expect(DeviceAuthMessage(challenge: AuthChallenge(senderNonce: [0xAB], hashAlgorithm: .sha1)).serialized()
            == [0x0A, 0x05, 0x12, 0x01, 0xAB, 0x18, 0x00])
        #expect(DeviceAuthMessage(error: AuthError(errorType: .internalError)).serialized() == [0x1A, 0x02, 0x08, 0x00])
        #expect(DeviceAuthMessage(response: AuthResponse(signature: [], clientAuthCertificate: [7], intermediateCertificates: [[], [8]])).serialized()
            == [0x12, 0x0A, 0x0A, 0x00, 0x12, 0x01, 0x07, 0x1A, 0x00, 0x1A, 0x01, 0x08])
        #expect(DeviceAuthMessage().serialized() == [])
    }

    // MARK: Decoding edge cases

    static let challenge: [UInt8] = [0x0A, 0x05, 0x12, 0x01, 0xAB, 0x18, 0x01]              // nonce AB, SHA-256
    static let response: [UInt8] = [0x12, 0x06, 0x0A, 0x01, 0x01, 0x12, 0x01, 0x02]       // signature 01, certificate 02

    @Test(arguments: [
        challenge, response,
        [0x1A, 0x02, 0x08, 0x02],                                   // error SIGNATURE_ALGORITHM_UNAVAILABLE
        [],                                                          // empty message
        challenge + [0x78, 0x05],                                    // unknown varint field 15
        challenge + [0x7A, 0x02, 0x01, 0x02],                        // unknown length-delimited field 15
        challenge + [0x7D, 1, 2, 3, 4], challenge + [0x79, 1, 2, 3, 4, 5, 6, 7, 8],
        challenge + [0x73, 0x78, 0x05, 0x74],                        // unknown group 14
        [0x0A, 0x04, 0x73, 0x08, 0x07, 0x74],                        // a group inside the challenge holding "field 1 = 7"
        [0x0A, 0x02, 0x78, 0x05], [0x12, 0x08, 0x0A, 0x00, 0x12, 0x00, 0x7A, 0x02, 0x01, 0x02],  // unknown fields in nested messages
        [0x08, 0x01],                                                // challenge (field 1) as a varint: unknown
        [0x0B, 0x0C],                                                // challenge (field 1) as an empty group: unknown
        [0x0A, 0x02, 0x12, 0x7F] + [0x0A, 0x01, 0x00],               // nonce truncated inside the challenge
        [0x0A, 0x02, 0x10, 0x05],                                    // nonce as a varint: unknown
        [0x0A, 0x02, 0x1A, 0x00],                                    // hash_algorithm length-delimited: unknown
        [0x0A, 0x02, 0x08, 0x07],                                    // signature_algorithm 7: kept as unknown
        [0x0A, 0x02, 0x18, 0x09],                                    // hash_algorithm 9
        [0x0A, 0x04, 0x08, 0x07, 0x08, 0x02],                        // unknown then RSASSA_PSS: both visible
        [0x0A, 0x04, 0x08, 0x07, 0x08, 0x08],                        // two unknown values: the first is kept
        [0x0A, 0x0B, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // -1 as int32
        [0x0A, 0x06, 0x08, 0x81, 0x80, 0x80, 0x80, 0x10],            // 2^32 + 1: int32 1 is RSASSA_PKCS1v15
        [0x0A, 0x02, 0x18, 0x00, 0x0A, 0x03, 0x12, 0x01, 0xCD],      // challenge twice: merged
        [0x0A, 0x03, 0x12, 0x01, 0xCD, 0x0A, 0x03, 0x12, 0x01, 0xEF], // nonce twice: the last wins
        [0x12, 0x03, 0x0A, 0x01, 0x01, 0x12, 0x03, 0x12, 0x01, 0x02], // response split over two occurrences: merged
        [0x12, 0x03, 0x0A, 0x01, 0x01],                              // response without client_auth_certificate
        [0x12, 0x03, 0x12, 0x01, 0x02],                              // response without signature
        [0x12, 0x00],                                                // empty response
        [0x12, 0x06, 0x0A, 0x01, 0x01, 0x12, 0x01, 0x02] + [0x12, 0x02, 0x20, 0x05],  // response signature_algorithm 5
        [0x12, 0x0A, 0x0A, 0x00, 0x12, 0x00, 0x1A, 0x00, 0x1A, 0x02, 0x03, 0x04],    // repeated intermediates, one empty
        [0x12, 0x06, 0x0A, 0x00, 0x12, 0x00, 0x18, 0x01],            // intermediate (field 3) as a varint: unknown
        [0x1A, 0x00],                                                // error without error_type
        [0x1A, 0x02, 0x08, 0x03],                                    // error_type 3: outside the enum, so missing
        [0x1A, 0x02, 0x08, 0x01, 0x1A, 0x00],                        // error twice: merged, the type stays
        [0x1A, 0x02, 0x08, 0x01, 0x1A, 0x02, 0x08, 0x03],            // then an unknown type: the known one stays
        [0x0A, 0x02, 0x12, 0x00] + [0x1A, 0x02, 0x08, 0x00],         // challenge and error
        [0x0A], [0x0A, 0x05, 0x12], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // truncated, garbage
        [0x00, 0x00], [0x0E], [0x0F],                                // field 0, wire types 6 and 7
        [0x0A, 0x01, 0x74], [0x74],                                  // end-group without a start
        [0x0A, 0x01, 0x73],                                          // group not closed inside the challenge
        [0x0A, 0x02, 0x73, 0x7C],                                    // group closed by another field's end
        [0x8A, 0x80, 0x80, 0x80, 0x00, 0x00],                        // challenge with a 5-byte tag
        [0x8A, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00],                  // a 6-byte tag
        [0x7B, 0x8A, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x7C],      // a 6-byte tag inside a group
        [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x00], [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0x80, 0x80, 0x80, 0x80, 0x10, 0x00],
        [0x78, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // 10-byte varint, bits past 64
        [0x78, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // 11-byte varint
    ] as [[UInt8]])
    func decodingAgrees(bytes: [UInt8]) {
        #expect(Self.agree(bytes), "\(bytes)")
    }

    @Test("what the reference says on some of them, spelled out")
    func decodedValues() throws {
        let unknown = try DeviceAuthMessage(decoding: [0x0A, 0x04, 0x08, 0x07, 0x08, 0x02])
        #expect(unknown.challenge?.unknownSignatureAlgorithm == 7 && unknown.challenge?.signatureAlgorithm == .rsassaPSS)
        let grouped = try DeviceAuthMessage(decoding: [0x0A, 0x04, 0x73, 0x08, 0x07, 0x74])
        #expect(grouped.challenge == AuthChallenge())
        let merged = try DeviceAuthMessage(decoding: [0x0A, 0x02, 0x18, 0x00, 0x0A, 0x03, 0x12, 0x01, 0xCD])
        #expect(merged.challenge == AuthChallenge(senderNonce: [0xCD], hashAlgorithm: .sha1))
        #expect(throws: DeviceAuthDecodingError.missingRequiredField("AuthResponse.client_auth_certificate")) {
            try DeviceAuthMessage(decoding: [0x12, 0x03, 0x0A, 0x01, 0x01])
        }
        #expect(throws: DeviceAuthDecodingError.missingRequiredField("AuthError.error_type")) {
            try DeviceAuthMessage(decoding: [0x1A, 0x02, 0x08, 0x03])
        }
        #expect(throws: DeviceAuthDecodingError.malformed(.truncated("length-delimited field"))) {
            try DeviceAuthMessage(decoding: [0x0A, 0x05, 0x12])
        }
    }

    /// Groups nested inside the challenge: the outer message and the challenge take two levels
    /// of SwiftProtobuf's 100.
    @Test(arguments: [97, 98, 99])
    func groupDepthAgrees(depth: Int) {
        let groups = [UInt8](repeating: 0x73, count: depth) + [UInt8](repeating: 0x74, count: depth)
        let bytes: [UInt8] = [0x0A] + Self.varint(UInt64(groups.count)) + groups
        #expect(Self.agree(bytes))
        #expect((try? DeviceAuthMessage(decoding: bytes)) != nil ? depth <= 98 : depth > 98)
    }

    @Test("every truncation of a full message, and 5,000 mutations of random ones, decode alike")
    func damagedInputsAgree() throws {
        let full = DeviceAuthMessage(challenge: AuthChallenge(senderNonce: [1, 2], hashAlgorithm: .sha256),
                                     response: Self.samples[6].response, error: AuthError(errorType: .noTLS)).serialized()
        for count in 0..<full.count { #expect(Self.agree(Array(full.prefix(count))), "prefix \(count)") }
        var rng = SplitMix64(seed: 0xBAD_B17E5)
        for _ in 0..<5_000 {
            var bytes = Self.randomMessage(&rng).serialized()
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let at = Int.random(in: 0...bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where at < bytes.count: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1 where at < bytes.count: bytes.remove(at: at)
                case 2: bytes.insert([0x08, 0x18, 0x73, 0x74, 0x80, 0x02].randomElement(using: &rng)!, at: at)
                default: bytes = Array(bytes.prefix(at))
                }
            }
            #expect(Self.agree(bytes), "\(bytes)")
        }
    }

    // MARK: Helpers

    /// Both decoders accept the bytes with the same result, or both refuse them for the same
    /// kind of reason (a missing required field, or malformed bytes).
    static func agree(_ bytes: [UInt8]) -> Bool {
        let ours = Result { () throws(DeviceAuthDecodingError) in try DeviceAuthMessage(decoding: bytes) }
        let reference = Result { try DeviceAuthMessage(decodingWithSwiftProtobuf: bytes) }
        switch (ours, reference) {
        case (.success(let a), .success(let b)): return a == b
        case (.failure(.missingRequiredField), .failure(let error)):
            return error as? BinaryDecodingError == .missingRequiredFields
        case (.failure(.malformed), .failure(let error)):
            return error as? BinaryDecodingError != .missingRequiredFields
        default: return false
        }
    }

    static func expectSameBytesAndRoundTrips(_ message: DeviceAuthMessage) throws {
        let ours = message.serialized()
        let reference = try message.serializedWithSwiftProtobuf()
        #expect(ours == reference, "\(message)")
        #expect(try DeviceAuthMessage(decoding: reference) == message)
        #expect(try DeviceAuthMessage(decodingWithSwiftProtobuf: ours) == message)
    }

    static func randomMessage(_ rng: inout SplitMix64) -> DeviceAuthMessage {
        func bytes() -> [UInt8] {
            let count = [0, 1, 16, 127, 128, 300].randomElement(using: &rng)!
            return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        }
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &rng) ? make() : nil }
        func signature() -> AuthSignatureAlgorithm { [.unspecified, .rsassaPKCS1v15, .rsassaPSS].randomElement(using: &rng)! }
        func hash() -> AuthHashAlgorithm { [.sha1, .sha256].randomElement(using: &rng)! }
        var message = DeviceAuthMessage()
        message.challenge = maybe { AuthChallenge(signatureAlgorithm: maybe(signature), senderNonce: maybe(bytes), hashAlgorithm: maybe(hash)) }
        message.response = maybe {
            AuthResponse(signature: bytes(), clientAuthCertificate: bytes(),
                         intermediateCertificates: (0..<Int.random(in: 0...3, using: &rng)).map { _ in bytes() },
                         signatureAlgorithm: maybe(signature), senderNonce: maybe(bytes), hashAlgorithm: maybe(hash), crl: maybe(bytes))
        }
        message.error = maybe { AuthError(errorType: [.internalError, .noTLS, .signatureAlgorithmUnavailable].randomElement(using: &rng)!) }
        return message
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var out = ProtoByteWriter()
        out.varint(value)
        return out.bytes
    }
}
