#if canImport(Glibc)
import CastTestSupport
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import SystemCrypto
import Testing

@Suite("Simulator authority")
struct SimulatorAuthorityTests {
    let authority = TestAuthority.main

    @Test("A generated authority: RSA-2048 root and ICA, ~10 years, CA flags, path lengths")
    func generatedShape() {
        let root = authority.rootCertificate, ica = authority.intermediateCertificate
        #expect(root.commonName == "castline simulator root CA")
        #expect(ica.commonName == "castline simulator device ICA")
        #expect(ica.issuerCommonName == root.commonName)
        #expect(root.publicKeyKind == .rsa(bits: 2048) && ica.publicKeyKind == .rsa(bits: 2048))
        #expect(authority.deviceModelKey.kind == .rsa(bits: 2048))
        #expect(root.lifetime == SimulatorAuthority.validity && ica.lifetime == SimulatorAuthority.validity)
        #expect(root.lifetime >= 3650 * 86_400)
        #expect(root.isValid() && ica.isValid())
        #expect(root.keyUsage == [.keyCertSign, .cRLSign] && ica.keyUsage == [.keyCertSign, .cRLSign])
        #expect(authority.rootCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(authority.rootKey.matches(root) && authority.intermediateKey.matches(ica))
    }

    @Test("save/load round trip: same certificates and keys, keys written 0600, certificates 0644")
    func saveAndLoad() throws {
        let directory = TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(directory) }
        try authority.save(to: directory)
        for key in ["root-ca-key.pem", "device-ica-key.pem", "device-model-key.pem"] {
            #expect(TemporaryDirectory.mode(directory + "/" + key) == 0o600, "\(key)")
        }
        for certificate in ["root-ca.pem", "device-ica.pem"] {
            #expect(TemporaryDirectory.mode(directory + "/" + certificate) == 0o644, "\(certificate)")
        }
        let loaded = try SimulatorAuthority.load(from: directory)
        #expect(loaded.rootCertificate == authority.rootCertificate)
        #expect(loaded.intermediateCertificate == authority.intermediateCertificate)
        #expect(loaded.deviceModelKey.publicKeyDER == authority.deviceModelKey.publicKeyDER)
        #expect(loaded.rootKey.publicKeyDER == authority.rootKey.publicKeyDER)
        #expect(loaded.intermediateKey.publicKeyDER == authority.intermediateKey.publicKeyDER)
        #expect(loaded.rootCertificatePEM == authority.rootCertificatePEM)

        // Credentials from the loaded authority chain to the original root.
        let credentials = try DeviceCredentials.issue(for: "reloaded", authority: loaded)
        try CertificateChainVerifier(trustAnchorsPEM: authority.rootCertificatePEM)
            .verify(credentials.deviceAuthCertificate, intermediates: credentials.intermediateCertificates)

        // Saving again over existing files keeps the modes (files are replaced, not rewritten).
        chmod(directory + "/root-ca-key.pem", 0o644)
        try loaded.save(to: directory)
        #expect(TemporaryDirectory.mode(directory + "/root-ca-key.pem") == 0o600)
        #expect(try SimulatorAuthority.loadOrCreate(directory: directory).rootCertificate == authority.rootCertificate)
    }

    @Test("loadOrCreate creates a missing folder (0700) and reuses it next time")
    func loadOrCreate() throws {
        let parent = TemporaryDirectory.make()
        let directory = parent + "/fresh"
        defer {
            TemporaryDirectory.remove(directory)
            TemporaryDirectory.remove(parent)
        }
        let created = try SimulatorAuthority.loadOrCreate(directory: directory)
        #expect(TemporaryDirectory.mode(directory) == 0o700)
        let again = try SimulatorAuthority.loadOrCreate(directory: directory)
        #expect(again.rootCertificate == created.rootCertificate)
        #expect(again.deviceModelKey.publicKeyDER == created.deviceModelKey.publicKeyDER)
        #expect(created.rootCertificate != authority.rootCertificate)
    }

    @Test("Incomplete or inconsistent folders are errors naming the problem")
    func brokenFolders() throws {
        let directory = TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(directory) }
        try authority.save(to: directory)

        // A missing device model key is regenerated.
        unlink(directory + "/device-model-key.pem")
        let regenerated = try SimulatorAuthority.load(from: directory)
        #expect(regenerated.deviceModelKey.publicKeyDER != authority.deviceModelKey.publicKeyDER)
        #expect(TemporaryDirectory.mode(directory + "/device-model-key.pem") == 0o600)

        // The ICA key replaced by the root key: the key does not match its certificate.
        let rootKeyPEM = try authority.rootKey.pkcs8PEM()
        try AuthorityFiles.writeText(directory + "/device-ica-key.pem", rootKeyPEM, mode: 0o600)
        #expect {
            try SimulatorAuthority.load(from: directory)
        } throws: { error in
            guard case CryptoError.file(_, let reason) = error else { return false }
            return reason.contains("device-ica-key.pem does not belong to device-ica.pem")
        }

        // A missing certificate: loadOrCreate refuses to overwrite the rest.
        unlink(directory + "/device-ica.pem")
        #expect {
            try SimulatorAuthority.loadOrCreate(directory: directory)
        } throws: { error in
            guard case CryptoError.file(_, let reason) = error else { return false }
            return reason.contains("missing device-ica.pem")
        }
        #expect(throws: CryptoError.self) { try SimulatorAuthority.load(from: directory) }
    }

    @Test("An authority loaded after its certificates expired is refused")
    func expiredAuthority() throws {
        let directory = TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(directory) }
        try authority.save(to: directory)
        #expect(throws: CryptoError.self) {
            try SimulatorAuthority.load(from: directory, now: authority.rootCertificate.notAfter + 1)
        }
    }
}
