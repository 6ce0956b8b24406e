@testable import SystemCrypto
import CastTestSupport
import Testing

@Suite("Keys and certificates")
struct KeyAndCertificateTests {
    @Test("P-256 and RSA keys survive a PKCS#8 PEM round trip")
    func keyRoundTrip() throws {
        for key in [try PrivateKey.generateP256(), try PrivateKey.generateRSA(bits: 2048)] {
            let pem = try key.pkcs8PEM()
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            #expect(pem.hasSuffix("-----END PRIVATE KEY-----\n"))
            let reread = try PrivateKey(pem: pem)
            #expect(reread.kind == key.kind)
            #expect(reread.publicKeyDER == key.publicKeyDER)
            #expect(!key.publicKeyDER.isEmpty)
        }
        #expect(try PrivateKey.generateP256().kind == .p256)
        #expect(try PrivateKey.generateRSA(bits: 2048).kind == .rsa(bits: 2048))
    }

    @Test("The hand-assembled P-256 PKCS#8 and SPKI equal OpenSSL's encoder output")
    func p256EncodingMatchesOpenSSL() throws {
        for _ in 0..<8 {
            let key = try PrivateKey.generateP256()
            #expect(try key.pkcs8PEM() == (try key.encoderPKCS8PEM()))
            let certificate = try Certificate.selfSigned(commonName: "spki", key: key, notBefore: 0, notAfter: 10)
            let parsed = try Certificate(derBytes: certificate.derBytes)
            #expect(parsed.publicKeyDER == key.publicKeyDER)
            #expect(key.matches(parsed))
        }
    }

    @Test("Malformed key PEM is a typed error carrying OpenSSL's reason")
    func badKeyPEM() {
        #expect {
            _ = try PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        } throws: { error in
            guard case CryptoError.key(let message) = error else { return false }
            return message.contains("OpenSSL:")
        }
        #expect(throws: CryptoError.self) { try PrivateKey(pem: "") }
    }

    @Test("A self-signed certificate carries its CN, validity and key")
    func selfSignedFields() throws {
        let key = try PrivateKey.generateP256()
        let now = UnixTime.now
        let certificate = try Certificate.selfSigned(commonName: "Living Room TV", key: key,
                                                     notBefore: now - 60, notAfter: now + 3600)
        #expect(certificate.commonName == "Living Room TV")
        #expect(certificate.issuerCommonName == "Living Room TV")
        #expect(certificate.notBefore == now - 60)
        #expect(certificate.notAfter == now + 3600)
        #expect(certificate.lifetime == 3660)
        #expect(certificate.isValid(at: now))
        #expect(!certificate.isValid(at: now + 3601))
        #expect(!certificate.isValid(at: now - 61))
        #expect(certificate.isSelfSigned)
        #expect(!certificate.isCertificateAuthority)
        #expect(certificate.keyUsage?.contains(.digitalSignature) == true)
        #expect(certificate.keyUsage?.contains(.keyCertSign) == false)
        #expect(certificate.publicKeyKind == .p256)
        #expect(certificate.serialNumberHex.count == 32)
        #expect(key.matches(certificate))
        #expect(!(try PrivateKey.generateP256()).matches(certificate))
    }

    @Test("Serial numbers are random")
    func serialsDiffer() throws {
        let key = try PrivateKey.generateP256()
        let serials = try (0..<16).map { _ in
            try Certificate.selfSigned(commonName: "s", key: key, notBefore: 0, notAfter: 10).serialNumberHex
        }
        #expect(Set(serials).count == serials.count)
    }

    @Test("PEM and DER round trips give equal certificates; parsed ones keep every property")
    func certificateRoundTrip() throws {
        let key = try PrivateKey.generateRSA(bits: 2048)
        let built = try Certificate.selfSigned(commonName: "round trip", key: key, notBefore: 1_000, notAfter: 2_000)
        let fromPEM = try Certificate(pem: built.pem)
        let fromDER = try Certificate(derBytes: built.derBytes)
        #expect(fromPEM == built)
        #expect(fromDER == built)
        #expect(fromPEM.commonName == "round trip")
        #expect(fromPEM.notBefore == 1_000 && fromPEM.notAfter == 2_000)
        #expect(fromPEM.isSelfSigned)
        #expect(fromPEM.publicKeyKind == .rsa(bits: 2048))
        #expect(key.matches(fromPEM))
        let bundle = try Certificate.all(fromPEM: built.pem + TestAuthority.main.rootCertificatePEM)
        #expect(bundle == [built, TestAuthority.main.rootCertificate])
        #expect(try Certificate.all(fromPEM: "no certificates here").isEmpty)
    }

    @Test("Malformed certificates are refused")
    func badCertificates() throws {
        let built = try Certificate.selfSigned(commonName: "x", key: try PrivateKey.generateP256(), notBefore: 0, notAfter: 1)
        #expect(throws: CryptoError.self) { try Certificate(derBytes: []) }
        #expect(throws: CryptoError.self) { try Certificate(derBytes: [0x30, 0x03, 0x02, 0x01, 0x00]) }
        #expect(throws: CryptoError.self) { try Certificate(derBytes: built.derBytes + [0]) }
        #expect(throws: CryptoError.self) { try Certificate(derBytes: Array(built.derBytes.dropLast())) }
        #expect(throws: CryptoError.self) { try Certificate(pem: "nothing") }
        let broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        #expect(throws: CryptoError.self) { try Certificate.all(fromPEM: broken) }
    }

    @Test("A validity window ending before it starts is refused")
    func invertedValidity() throws {
        let key = try PrivateKey.generateP256()
        #expect(throws: CryptoError.self) { try Certificate.selfSigned(commonName: "x", key: key, notBefore: 10, notAfter: 9) }
    }

    @Test("Device TLS certificates: P-256, CN = device id, 96 h from 60 s ago, accepted by the 4-day check")
    func deviceTLSCertificate() throws {
        let now = UnixTime.now
        let credentials = try DeviceCredentials.issue(for: "0f5e7a2c9b6d4e3f8a1b2c3d4e5f6a7b", authority: TestAuthority.main, now: now)
        let tls = credentials.tlsCertificate
        #expect(tls.commonName == "0f5e7a2c9b6d4e3f8a1b2c3d4e5f6a7b")
        #expect(tls.publicKeyKind == .p256)
        #expect(tls.isSelfSigned)
        #expect(tls.notBefore == now - 60)
        #expect(tls.lifetime == 96 * 3600)
        #expect(tls.lifetime <= DeviceAuthCheck.maxTLSCertificateLifetime)
        #expect(tls.isValid(at: now))
        #expect(credentials.tlsKey.matches(tls))
        #expect(credentials.tlsCertificateDER == tls.derBytes)
        #expect(try Certificate(pem: credentials.tlsCertificatePEM) == tls)
        #expect(try PrivateKey(pem: credentials.tlsPrivateKeyPEM).publicKeyDER == credentials.tlsKey.publicKeyDER)
        try DeviceAuthCheck.checkPeerCertificate(tls, at: now)
        try DeviceAuthCheck.checkPeerCertificate(tls, at: tls.notAfter)
        #expect(throws: DeviceAuthError.tlsCertificateNotYetValid(notBefore: tls.notBefore, at: tls.notBefore - 1)) {
            try DeviceAuthCheck.checkPeerCertificate(tls, at: tls.notBefore - 1)
        }
        #expect(throws: DeviceAuthError.tlsCertificateExpired(notAfter: tls.notAfter, at: tls.notAfter + 1)) {
            try DeviceAuthCheck.checkPeerCertificate(tls, at: tls.notAfter + 1)
        }
        let renewed = try credentials.renewingTLSIdentity(now: now + 3 * 86_400)
        #expect(renewed.tlsCertificate.notBefore == now + 3 * 86_400 - 60)
        #expect(renewed.tlsCertificateDER != credentials.tlsCertificateDER)
        #expect(renewed.deviceAuthCertificate == credentials.deviceAuthCertificate)
    }

    @Test("A peer certificate valid for more than 4 days is refused")
    func longLivedPeerCertificate() throws {
        let now = UnixTime.now
        let long = try Certificate.selfSigned(commonName: "long", key: try PrivateKey.generateP256(),
                                              notBefore: now - 60, notAfter: now + 4 * 86_400 + 1)
        #expect(throws: DeviceAuthError.tlsCertificateLifetimeTooLong(notAfter: long.notAfter, at: now)) {
            try DeviceAuthCheck.checkPeerCertificate(long, at: now)
        }
    }

    @Test("Device ids longer than 64 bytes are cut on a character boundary")
    func longDeviceID() throws {
        let id = String(repeating: "é", count: 40)  // 80 UTF-8 bytes
        let credentials = try DeviceCredentials.issue(for: id, authority: TestAuthority.main)
        #expect(credentials.deviceID == String(repeating: "é", count: 32))
        #expect(credentials.tlsCertificate.commonName == credentials.deviceID)
        #expect(credentials.deviceAuthCertificate.commonName == credentials.deviceID)
    }
}
