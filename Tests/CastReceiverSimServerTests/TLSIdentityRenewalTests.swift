import CastDeviceAuth
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import Testing

/// A device renews its TLS identity before the 96 h certificate expires: new connections get
/// the new certificate, open ones keep working, and device auth on each connection signs the
/// certificate that connection was accepted with.
@Suite("TLS identity renewal")
struct TLSIdentityRenewalTests {
    static func authenticate(_ client: TestCastClient, verifier: DeviceAuthVerifier) async throws -> Bool {
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255) }
        try await client.send(CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
                                          payload: .binary(DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256))))
        guard let reply = await client.next(where: { $0.namespace == .deviceAuth }),
              case .binary(let bytes) = reply.payload,
              let peer = try await client.peerCertificateDER() else { return false }
        _ = try verifier.verify(reply: bytes, peerCertificateDER: peer, expectedNonce: nonce)
        return true
    }

    @Test("new connections get a renewed certificate; old and new connections both pass device auth")
    func renewal() async throws {
        try await withSimulatorRig(settings: { $0.tlsRenewalInterval = 0.3 }) { rig in
            let verifier = DeviceAuthVerifier(trustAnchors: [rig.simulator.authority.rootCertificate])
            let first = try await rig.connect()
            let firstCertificate = try #require(try await first.peerCertificateDER())
            // A new connection every 0.1 s until one is accepted with another certificate.
            let renewed = try await pollValue(timeout: 20, every: .milliseconds(100)) { () async throws -> TestCastClient? in
                let client = try await rig.connect()
                if let certificate = try await client.peerCertificateDER(), certificate != firstCertificate { return client }
                await client.close()
                return nil
            }
            let second = try #require(renewed, "no new certificate within 20 s of a 0.3 s renewal interval")
            #expect(first.channel.isActive, "renewal must not close open connections")
            #expect(try await Self.authenticate(first, verifier: verifier))
            #expect(try await Self.authenticate(second, verifier: verifier))
            await first.close()
            await second.close()
        }
    }
}
