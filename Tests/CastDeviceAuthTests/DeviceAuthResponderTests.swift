import CastProtocol
import CastTestSupport
import CastDeviceAuth
import CastProtoReference
import Foundation
import NIOSSL
import SwiftProtobuf
import SystemCrypto
import Testing

/// One authority and two devices for every test here (RSA-2048 generation is slow).
private enum Fixture {
    static let authority = TestAuthority.main
    static let otherAuthority = TestAuthority.other
    static let device = issue("3f2504e04f8911d39a0c0305e82c3301", authority)
    static let otherDevice = issue("9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", authority)

    static func issue(_ id: String, _ authority: SimulatorAuthority) -> DeviceCredentials {
        do { return try DeviceCredentials.issue(for: id, authority: authority) } catch { fatalError("credentials: \(error)") }
    }

    static var verifier: DeviceAuthVerifier {
        do { return try DeviceAuthVerifier(trustAnchorsPEM: authority.rootCertificatePEM) } catch {
            fatalError("verifier: \(error)")
        }
    }
}

private func decode(_ bytes: [UInt8]) throws -> Cast_Channel_DeviceAuthMessage {
    try Cast_Channel_DeviceAuthMessage(serializedBytes: bytes)
}

@Suite("Device-auth responder")
struct DeviceAuthResponderTests {
    @Test("an audio-only device certificate (Cast's policy OID) is reported as audio-only by the verifier")
    func audioOnly() throws {
        let speaker = try DeviceCredentials.issue(for: "5c1d0b7e8f9a4b3c2d1e0f9a8b7c6d5e", authority: Fixture.authority, audioOnly: true)
        #expect(speaker.deviceAuthCertificate.policyOIDs == [DeviceCredentials.audioOnlyPolicyOID])
        #expect(Fixture.device.deviceAuthCertificate.policyOIDs.isEmpty)
        let reply = DeviceAuthResponder(credentials: speaker, authority: Fixture.authority)
            .reply(to: DeviceAuthVerifier.challenge(nonce: [1, 2, 3], hash: .sha256))
        let verified = try Fixture.verifier.verify(reply: reply.bytes, peerCertificateDER: speaker.tlsCertificateDER, expectedNonce: [1, 2, 3])
        #expect(verified.audioOnly)
    }

    let responder = DeviceAuthResponder(credentials: Fixture.device, authority: Fixture.authority)

    @Test("A 16-byte nonce with SHA-256 is answered and verifies against the exported root")
    func sha256Challenge() throws {
        let nonce = (0..<16).map { UInt8($0 * 7 + 3) }
        let reply = responder.reply(to: DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256))
        #expect(reply.outcome == .answered(hash: .sha256, nonceLength: 16))

        let message = try decode(reply.bytes)
        #expect(message.hasResponse && !message.hasError)
        #expect(message.response.hashAlgorithm == .sha256)
        #expect(message.response.signatureAlgorithm == .rsassaPkcs1V15)
        #expect([UInt8](message.response.senderNonce) == nonce)
        #expect([UInt8](message.response.clientAuthCertificate) == Fixture.device.deviceAuthCertificate.derBytes)
        #expect(message.response.intermediateCertificate.map { [UInt8]($0) }
            == [Fixture.authority.intermediateCertificate.derBytes])

        let verified = try Fixture.verifier.verify(reply: reply.bytes, peerCertificateDER: Fixture.device.tlsCertificateDER,
                                                   expectedNonce: nonce)
        #expect(verified.hash == .sha256)
        #expect(verified.senderNonce == nonce)
        #expect(verified.deviceCertificate.commonName == "3f2504e04f8911d39a0c0305e82c3301")
        #expect(!verified.audioOnly)

        // The signature is over nonce || TLS certificate DER, with SHA-256 and not SHA-1.
        let signed = nonce + Fixture.device.tlsCertificateDER
        let signature = [UInt8](message.response.signature)
        #expect(Signature.verify(signature, data: signed, certificate: Fixture.device.deviceAuthCertificate, digest: .sha256))
        #expect(!Signature.verify(signature, data: signed, certificate: Fixture.device.deviceAuthCertificate, digest: .sha1))
    }

    @Test("Without hash_algorithm the device signs with SHA-1; without a nonce it echoes none")
    func defaultChallenge() throws {
        let reply = responder.reply(to: DeviceAuthVerifier.challenge(nonce: nil, hash: nil))
        #expect(reply.outcome == .answered(hash: .sha1, nonceLength: 0))
        let message = try decode(reply.bytes)
        #expect(message.response.hashAlgorithm == .sha1)
        #expect(!message.response.hasSenderNonce)
        let verified = try Fixture.verifier.verify(reply: reply.bytes, peerCertificateDER: Fixture.device.tlsCertificateDER)
        #expect(verified.hash == .sha1 && verified.senderNonce.isEmpty)
        let signature = [UInt8](message.response.signature)
        #expect(Signature.verify(signature, data: Fixture.device.tlsCertificateDER,
                                 certificate: Fixture.device.deviceAuthCertificate, digest: .sha1))

        // An empty nonce that is present is echoed as present and empty.
        let empty = responder.reply(to: DeviceAuthVerifier.challenge(nonce: [], hash: .sha1))
        #expect(empty.outcome == .answered(hash: .sha1, nonceLength: 0))
        let echoed = try decode(empty.bytes).response
        #expect(echoed.hasSenderNonce && echoed.senderNonce.isEmpty)
        _ = try Fixture.verifier.verify(reply: empty.bytes, peerCertificateDER: Fixture.device.tlsCertificateDER,
                                        expectedNonce: [])
    }

    @Test("Garbage, empty input and messages without a challenge get INTERNAL_ERROR")
    func invalidInput() throws {
        var responseOnly = Cast_Channel_DeviceAuthMessage()
        responseOnly.error.errorType = .noTls
        var mixed = Cast_Channel_DeviceAuthMessage()
        mixed.challenge = Cast_Channel_AuthChallenge()
        mixed.error.errorType = .internalError
        let inputs: [[UInt8]] = [
            [], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x0A], [0x0A, 0x05, 0x12], Array("hello".utf8),
            try responseOnly.serializedBytes(), try mixed.serializedBytes(), [0x0A, 0x02, 0x12, 0x7F],
        ]
        for input in inputs {
            let reply = responder.reply(to: input)
            guard case .rejected = reply.outcome else {
                Issue.record("input \(input) was answered")
                continue
            }
            let message = try decode(reply.bytes)
            #expect(message.hasError && !message.hasResponse)
            #expect(message.error.errorType == .internalError)
            #expect(responder.respond(to: input) == reply.bytes)
            #expect(throws: DeviceAuthError.deviceReportedError(errorType: 0)) {
                try Fixture.verifier.verify(reply: reply.bytes, peerCertificateDER: Fixture.device.tlsCertificateDER)
            }
        }
    }

    @Test("RSASSA-PSS, unknown signature or hash algorithms get SIGNATURE_ALGORITHM_UNAVAILABLE")
    func unavailableAlgorithms() throws {
        var pss = Cast_Channel_DeviceAuthMessage()
        pss.challenge.signatureAlgorithm = .rsassaPss
        let inputs: [[UInt8]] = [
            try pss.serializedBytes(),
            [0x0A, 0x02, 0x08, 0x07],        // challenge { signature_algorithm: 7 }
            [0x0A, 0x02, 0x18, 0x09],        // challenge { hash_algorithm: 9 }
        ]
        for input in inputs {
            let reply = responder.reply(to: input)
            guard case .rejected(let reason) = reply.outcome else {
                Issue.record("input \(input) was answered")
                continue
            }
            #expect(!reason.isEmpty)
            #expect(try decode(reply.bytes).error.errorType == .signatureAlgorithmUnavailable)
        }
        // UNSPECIFIED is accepted like RSASSA_PKCS1v15 (as openscreen's receiver does).
        var unspecified = Cast_Channel_DeviceAuthMessage()
        unspecified.challenge.signatureAlgorithm = .unspecified
        #expect(responder.reply(to: try unspecified.serializedBytes()).outcome == .answered(hash: .sha1, nonceLength: 0))
    }

    @Test("Random and mutated inputs never trap; every reply decodes")
    func fuzzedInputs() throws {
        var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 { random.next() }
        let seed = DeviceAuthVerifier.challenge(nonce: Array(repeating: 0xAB, count: 16), hash: .sha256)
        for round in 0..<600 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0..<Int(next() % 40)).map { _ in UInt8(truncatingIfNeeded: next()) }
            } else {
                input = seed
                for _ in 0..<(1 + Int(next() % 3)) where !input.isEmpty {
                    input[Int(next() % UInt64(input.count))] = UInt8(truncatingIfNeeded: next())
                }
            }
            let reply = responder.reply(to: input)
            let message = try decode(reply.bytes)
            switch reply.outcome {
            case .answered: #expect(message.hasResponse && !message.hasError)
            case .rejected: #expect(message.hasError && !message.hasResponse)
            }
        }
    }

    @Test("A reply checked against another TLS certificate, or another root, fails")
    func wrongPeerOrRoot() throws {
        let nonce = [UInt8](repeating: 0x5A, count: 16)
        let reply = responder.respond(to: DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256))
        #expect(throws: DeviceAuthError.signatureMismatch(.sha256)) {
            try Fixture.verifier.verify(reply: reply, peerCertificateDER: Fixture.otherDevice.tlsCertificateDER)
        }
        #expect(throws: DeviceAuthError.senderNonceMismatch) {
            try Fixture.verifier.verify(reply: reply, peerCertificateDER: Fixture.device.tlsCertificateDER,
                                        expectedNonce: [UInt8](repeating: 0x5B, count: 16))
        }
        let foreignRoot = DeviceAuthVerifier(trustAnchors: [Fixture.otherAuthority.rootCertificate])
        #expect {
            try foreignRoot.verify(reply: reply, peerCertificateDER: Fixture.device.tlsCertificateDER)
        } throws: { error in
            guard case DeviceAuthError.untrustedChain = error else { return false }
            return true
        }
        // A responder whose intermediate is from another authority does not chain either.
        let mismatched = DeviceAuthResponder(credentials: Fixture.device, authority: Fixture.otherAuthority)
        #expect(throws: DeviceAuthError.self) {
            try Fixture.verifier.verify(reply: mismatched.respond(to: DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256)),
                                        peerCertificateDER: Fixture.device.tlsCertificateDER)
        }
        // The peer certificate must be short-lived, even when the signature covers it.
        let now = UnixTime.now
        #expect(throws: DeviceAuthError.tlsCertificateExpired(notAfter: Fixture.device.tlsCertificate.notAfter,
                                                              at: now + 5 * 86_400)) {
            try Fixture.verifier.verify(reply: reply, peerCertificateDER: Fixture.device.tlsCertificateDER,
                                        at: now + 5 * 86_400)
        }
    }

    @Test("Many event loops may share one responder")
    func concurrentReplies() async throws {
        let responder = self.responder
        let challenge = DeviceAuthVerifier.challenge(nonce: Array(repeating: 1, count: 16), hash: .sha256)
        let replies = await withTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<16 { group.addTask { responder.respond(to: challenge) } }
            return await group.reduce(into: [[UInt8]]()) { $0.append($1) }
        }
        #expect(Set(replies).count == 1)  // PKCS#1 v1.5 is deterministic
        _ = try Fixture.verifier.verify(reply: replies[0], peerCertificateDER: Fixture.device.tlsCertificateDER)
    }

    @Test("swift-nio-ssl accepts the P-256 TLS certificate and PKCS#8 key for a server context")
    func nioSSLAcceptsTLSIdentity() throws {
        let certificate = try NIOSSLCertificate(bytes: Array(Fixture.device.tlsCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(Fixture.device.tlsPrivateKeyPEM.utf8), format: .pem)
        #expect(try certificate.toDERBytes() == Fixture.device.tlsCertificateDER)
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)],
                                                                     privateKey: .privateKey(key))
        _ = try NIOSSLContext(configuration: configuration)
    }
}
