import CastCore
import CastDeviceAuth
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import SystemCrypto
import Testing

/// The two TLS profiles as a sender sees them on the wire: version, certificate key, how the
/// server's first flight is packed, session tickets; device auth with both.
@Suite("Device TLS profiles over loopback")
struct DeviceTLSProfileTests {
    /// One TLS record: content type (22 handshake, 20 change_cipher_spec, 23 application data),
    /// record version, body.
    struct Record: Equatable {
        var type: UInt8
        var version: UInt16
        var body: [UInt8]
    }

    /// Splits `bytes` into records; a trailing partial record is left out.
    static func records(_ bytes: [UInt8]) -> [Record] {
        var result: [Record] = []
        var i = 0
        while i + 5 <= bytes.count {
            let length = Int(bytes[i + 3]) << 8 | Int(bytes[i + 4])
            guard i + 5 + length <= bytes.count else { break }
            result.append(Record(type: bytes[i], version: UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i + 2]),
                                 body: Array(bytes[(i + 5)..<(i + 5 + length)])))
            i += 5 + length
        }
        return result
    }

    /// The handshake messages (type, body) in one plaintext handshake record.
    static func handshakeMessages(_ record: Record) -> [(type: UInt8, body: [UInt8])] {
        var result: [(UInt8, [UInt8])] = []
        var i = 0
        let b = record.body
        while i + 4 <= b.count {
            let length = Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard i + 4 + length <= b.count else { break }
            result.append((b[i], Array(b[(i + 4)..<(i + 4 + length)])))
            i += 4 + length
        }
        return result
    }

    /// The extension types of a ServerHello body.
    static func serverHelloExtensions(_ body: [UInt8]) -> [UInt16] {
        // version (2), random (32), session id (1 + n), cipher suite (2), compression (1), extensions (2 + …)
        var i = 34
        guard i < body.count else { return [] }
        i += 1 + Int(body[i]) + 3
        guard i + 2 <= body.count else { return [] }
        let end = min(body.count, i + 2 + (Int(body[i]) << 8 | Int(body[i + 1])))
        i += 2
        var types: [UInt16] = []
        while i + 4 <= end {
            types.append(UInt16(body[i]) << 8 | UInt16(body[i + 1]))
            i += 4 + (Int(body[i + 2]) << 8 | Int(body[i + 3]))
        }
        return types
    }

    static let sessionTicketExtension: UInt16 = 35
    static let supportedVersionsExtension: UInt16 = 43

    @Test("chromecast-legacy: TLS 1.2, RSA-2048, ServerHello…ServerHelloDone in one record, no session ticket; device auth verifies")
    func legacy() async throws {
        try await withSimulatorRig(settings: { $0.tlsProfile = .chromecastLegacy }) { rig in
            let tap = WireTap()
            let client = try await rig.connect(tap: tap)
            // A reply after the handshake: every handshake record the device sent has arrived.
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 1])
            #expect(await client.next(type: "RECEIVER_STATUS", namespace: .receiver) != nil)

            let records = Self.records(tap.bytes)
            let first = try #require(records.first)
            #expect(first.type == 22)
            let flight = Self.handshakeMessages(first)
            // ServerHello, Certificate, ServerKeyExchange, ServerHelloDone: a TLS 1.2 flight, in one record.
            #expect(flight.map(\.type) == [2, 11, 12, 14], "\(records.prefix(6).map { ($0.type, $0.body.count, Self.handshakeMessages($0).map(\.type)) })")
            let hello = try #require(flight.first)
            #expect(Array(hello.body.prefix(2)) == [3, 3], "ServerHello version TLS 1.2")
            let extensions = Self.serverHelloExtensions(hello.body)
            #expect(!extensions.contains(Self.supportedVersionsExtension), "TLS 1.3 negotiated: \(extensions)")
            #expect(!extensions.contains(Self.sessionTicketExtension), "the device offers tickets: \(extensions)")
            // Plaintext handshake records come before the device's ChangeCipherSpec; none holds a
            // NewSessionTicket (4).
            let plaintext = records.prefix { $0.type != 20 }.filter { $0.type == 22 }
            #expect(!plaintext.flatMap { Self.handshakeMessages($0).map(\.type) }.contains(4))
            #expect(records.contains { $0.type == 20 }, "no ChangeCipherSpec: not a TLS 1.2 handshake")

            let certificate = try Certificate(derBytes: try #require(try await client.peerCertificateDER()))
            #expect(certificate.publicKeyKind == .rsa(bits: 2048))
            #expect(certificate.lifetime == DeviceCredentials.tlsLifetime)
            let verifier = DeviceAuthVerifier(trustAnchors: [rig.simulator.authority.rootCertificate])
            #expect(try await TLSIdentityRenewalTests.authenticate(client, verifier: verifier))
            await client.close()
        }
    }

    @Test("modern: TLS 1.3, EC P-256; device auth verifies")
    func modern() async throws {
        try await withSimulatorRig(settings: { $0.tlsProfile = .modern }) { rig in
            let tap = WireTap()
            let client = try await rig.connect(tap: tap)
            let records = Self.records(tap.bytes)
            let first = try #require(records.first)
            let hello = try #require(Self.handshakeMessages(first).first)
            #expect(hello.type == 2)
            #expect(Self.serverHelloExtensions(hello.body).contains(Self.supportedVersionsExtension), "not TLS 1.3")
            let certificate = try Certificate(derBytes: try #require(try await client.peerCertificateDER()))
            #expect(certificate.publicKeyKind == .p256)
            let verifier = DeviceAuthVerifier(trustAnchors: [rig.simulator.authority.rootCertificate])
            #expect(try await TLSIdentityRenewalTests.authenticate(client, verifier: verifier))
            await client.close()
        }
    }

    @Test("a renewed legacy identity stays legacy: RSA-2048 again, a new certificate")
    func renewalKeepsProfile() async throws {
        try await withSimulatorRig(settings: { $0.tlsProfile = .chromecastLegacy; $0.tlsRenewalInterval = 0.3 }) { rig in
            let first = try await rig.connect()
            let firstCertificate = try #require(try await first.peerCertificateDER())
            await first.close()
            let renewed = try await pollValue(timeout: 20, every: .milliseconds(100)) { () async throws -> [UInt8]? in
                let client = try await rig.connect()
                let certificate = try await client.peerCertificateDER()
                await client.close()
                return certificate != firstCertificate ? certificate : nil
            }
            let certificate = try Certificate(derBytes: try #require(renewed, "no renewal within 20 s"))
            #expect(certificate.publicKeyKind == .rsa(bits: 2048))
        }
    }

    @Test("the profile: the device's own, else the simulator-wide one, else the model's default")
    func precedence() {
        var device = SimulatedDeviceConfiguration(name: "x", uuid: String(repeating: "a", count: 32))
        #expect(device.effectiveTLSProfile() == .chromecastLegacy)
        #expect(device.effectiveTLSProfile(fallback: .modern) == .modern)
        device.model = "Chromecast with Google TV"
        #expect(device.effectiveTLSProfile() == .modern)
        #expect(device.effectiveTLSProfile(fallback: .chromecastLegacy) == .chromecastLegacy)
        device.tlsProfile = .chromecastLegacy
        #expect(device.effectiveTLSProfile(fallback: .modern) == .chromecastLegacy)
        for model in ["Chromecast", "Chromecast Ultra", "Chromecast Audio", "Google Home Mini", "Google Nest Hub"] {
            #expect(DeviceTLSProfile.defaultProfile(model: model) == .chromecastLegacy, "\(model)")
        }
    }

    @Test("`list` names each device's profile")
    func listed() async throws {
        try await withSimulatorRig(settings: { $0.tlsProfile = .modern }) { rig in
            let reply = try await rig.control(["command": "list"])
            #expect(reply["devices"]?[0]?["tls"]?.string == "modern", "\(reply.serialized())")
        }
    }
}
