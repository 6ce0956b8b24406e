@testable import SystemCrypto
import CastTestSupport
import Testing

@Suite("Signatures and certificate chains")
struct ChainAndSignatureTests {
    let authority = TestAuthority.main

    @Test("root → ICA → device certificate verifies; the path ends at the root")
    func chainVerifies() throws {
        let credentials = try DeviceCredentials.issue(for: "device-1", authority: authority)
        let device = credentials.deviceAuthCertificate
        #expect(device.commonName == "device-1")
        #expect(device.issuerCommonName == SimulatorAuthority.intermediateCommonName)
        #expect(device.publicKeyKind == .rsa(bits: 2048))
        #expect(device.keyUsage?.contains(.digitalSignature) == true)
        #expect(!device.isCertificateAuthority)
        #expect(authority.intermediateCertificate.isCertificateAuthority)
        #expect(authority.rootCertificate.isSelfSigned)
        #expect(authority.rootCertificate.commonName == SimulatorAuthority.rootCommonName)
        #expect(authority.intermediateCertificate.verifySignature(issuer: authority.rootCertificate))
        #expect(device.verifySignature(issuer: authority.intermediateCertificate))
        #expect(!device.verifySignature(issuer: authority.rootCertificate))

        let verifier = CertificateChainVerifier(trustAnchors: [authority.rootCertificate])
        let path = try verifier.verify(device, intermediates: credentials.intermediateCertificates)
        #expect(path.map(\.commonName) == ["device-1", SimulatorAuthority.intermediateCommonName,
                                           SimulatorAuthority.rootCommonName])
        let fromPEM = try CertificateChainVerifier(trustAnchorsPEM: authority.rootCertificatePEM)
        try fromPEM.verify(try Certificate(derBytes: device.derBytes),
                           intermediates: [try Certificate(derBytes: authority.intermediateCertificate.derBytes)])
    }

    @Test("A device certificate from another authority, or without its intermediate, is untrusted")
    func foreignChainFails() throws {
        let foreign = try DeviceCredentials.issue(for: "intruder", authority: TestAuthority.other)
        let verifier = CertificateChainVerifier(trustAnchors: [authority.rootCertificate])
        #expect {
            try verifier.verify(foreign.deviceAuthCertificate, intermediates: foreign.intermediateCertificates)
        } throws: { error in
            guard case ChainVerificationError.untrusted = error else { return false }
            return true
        }
        let own = try DeviceCredentials.issue(for: "device", authority: authority)
        #expect {
            try verifier.verify(own.deviceAuthCertificate, intermediates: [])
        } throws: { error in
            guard case ChainVerificationError.untrusted = error else { return false }
            return true
        }
        #expect(throws: ChainVerificationError.noTrustAnchors) {
            try CertificateChainVerifier(trustAnchors: []).verify(own.deviceAuthCertificate)
        }
    }

    @Test("Verification time outside the validity windows gives expired / not yet valid")
    func chainValidityWindow() throws {
        let now = UnixTime.now
        let credentials = try DeviceCredentials.issue(for: "dated", authority: authority, now: now)
        let verifier = CertificateChainVerifier(trustAnchors: [authority.rootCertificate])
        let device = credentials.deviceAuthCertificate
        try verifier.verify(device, intermediates: credentials.intermediateCertificates, at: now)
        #expect(throws: ChainVerificationError.expired(commonName: "dated")) {
            try verifier.verify(device, intermediates: credentials.intermediateCertificates, at: device.notAfter + 1)
        }
        #expect(throws: ChainVerificationError.notYetValid(commonName: "dated")) {
            try verifier.verify(device, intermediates: credentials.intermediateCertificates, at: device.notBefore - 1)
        }
    }

    @Test("A leaf signed by a key that is not its issuer's fails with a bad signature")
    func forgedLeaf() throws {
        let impostorKey = try PrivateKey.generateRSA(bits: 2048)
        let ica = authority.intermediateCertificate
        // Same issuer name, wrong key: build a look-alike ICA for the impostor key and sign with it.
        var builder = CertificateBuilder(commonName: SimulatorAuthority.intermediateCommonName,
                                         notBefore: ica.notBefore, notAfter: ica.notAfter)
        builder.organization = SimulatorAuthority.organization
        builder.isCertificateAuthority = true
        builder.keyUsage = [.keyCertSign, .cRLSign]
        let fakeICA = try builder.selfSigned(key: impostorKey)
        let leaf = try Certificate.leaf(commonName: "forged", subjectKey: impostorKey, issuer: fakeICA, issuerKey: impostorKey,
                                        notBefore: UnixTime.now - 60, notAfter: UnixTime.now + 3600)
        #expect(!leaf.verifySignature(issuer: ica))
        let verifier = CertificateChainVerifier(trustAnchors: [authority.rootCertificate])
        #expect(throws: ChainVerificationError.self) { try verifier.verify(leaf, intermediates: [ica]) }
        #expect(throws: CryptoError.self) {
            try Certificate.leaf(commonName: "mismatch", subjectKey: impostorKey, issuer: ica, issuerKey: impostorKey,
                                 notBefore: 0, notAfter: 1)
        }
    }

    @Test("RSASSA-PKCS1-v1_5 signatures verify only with the digest they were made with")
    func digestMustMatch() throws {
        let credentials = try DeviceCredentials.issue(for: "signer", authority: authority)
        let data = Array("nonce||certificate".utf8)
        let sha1 = try Signature.sign(data, key: credentials.deviceAuthKey, digest: .sha1)
        let sha256 = try Signature.sign(data, key: credentials.deviceAuthKey, digest: .sha256)
        #expect(sha1.count == 256 && sha256.count == 256)
        #expect(sha1 != sha256)
        let certificate = credentials.deviceAuthCertificate
        #expect(Signature.verify(sha1, data: data, certificate: certificate, digest: .sha1))
        #expect(!Signature.verify(sha1, data: data, certificate: certificate, digest: .sha256))
        #expect(Signature.verify(sha256, data: data, certificate: certificate, digest: .sha256))
        #expect(!Signature.verify(sha256, data: data, certificate: certificate, digest: .sha1))
        // PKCS#1 v1.5 is deterministic.
        #expect(try Signature.sign(data, key: credentials.deviceAuthKey, digest: .sha256) == sha256)
    }

    @Test("A tampered signature, tampered data or another key fails")
    func tamperedSignature() throws {
        let credentials = try DeviceCredentials.issue(for: "signer", authority: authority)
        let data = [UInt8](repeating: 7, count: 300)
        let signature = try Signature.sign(data, key: credentials.deviceAuthKey, digest: .sha256)
        let certificate = credentials.deviceAuthCertificate
        for index in [0, 100, signature.count - 1] {
            var tampered = signature
            tampered[index] ^= 0x01
            #expect(!Signature.verify(tampered, data: data, certificate: certificate, digest: .sha256))
        }
        var changed = data
        changed[42] = 8
        #expect(!Signature.verify(signature, data: changed, certificate: certificate, digest: .sha256))
        #expect(!Signature.verify([], data: data, certificate: certificate, digest: .sha256))
        #expect(!Signature.verify(Array(signature.dropLast()), data: data, certificate: certificate, digest: .sha256))
        #expect(!Signature.verify(signature, data: data, certificate: credentials.tlsCertificate, digest: .sha256))
        let other = try DeviceCredentials.issue(for: "signer", authority: TestAuthority.other)
        #expect(!Signature.verify(signature, data: data, certificate: other.deviceAuthCertificate, digest: .sha256))
    }

    @Test("ECDSA signatures with the TLS key verify against the TLS certificate")
    func ecdsaSignature() throws {
        let credentials = try DeviceCredentials.issue(for: "ec", authority: authority)
        let data = Array("hello".utf8)
        let signature = try Signature.sign(data, key: credentials.tlsKey, digest: .sha256)
        #expect(Signature.verify(signature, data: data, certificate: credentials.tlsCertificate, digest: .sha256))
        #expect(!Signature.verify(signature, data: data + [0], certificate: credentials.tlsCertificate, digest: .sha256))
    }

    @Test("SHA-256 and SHA-1 digests match the FIPS 180 test vectors")
    func digests() {
        let abc = Array("abc".utf8)
        let hex = { (bytes: [UInt8]) in bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
        #expect(hex(Digest.sha256(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Digest.sha1(abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Digest.sha256([]).count == 32)
        #expect(Digest.sha256(abc) != Digest.sha256(Array("abd".utf8)))
    }

    @Test("verifyDeviceAuth: chain, RSA key and signature over the signed data")
    func deviceAuthCheck() throws {
        let credentials = try DeviceCredentials.issue(for: "auth", authority: authority)
        let signed = [UInt8](repeating: 1, count: 16) + credentials.tlsCertificateDER
        let signature = try Signature.sign(signed, key: credentials.deviceAuthKey, digest: .sha256)
        let intermediates = credentials.intermediateCertificates.map(\.derBytes)
        let device = try DeviceAuthCheck.verifyDeviceAuth(
            signature: signature, deviceCertificateDER: credentials.deviceAuthCertificate.derBytes,
            intermediatesDER: intermediates, signedData: signed, hash: .sha256,
            trustAnchors: [authority.rootCertificate], at: UnixTime.now)
        #expect(device == credentials.deviceAuthCertificate)
        #expect(throws: DeviceAuthError.signatureMismatch(.sha1)) {
            try DeviceAuthCheck.verifyDeviceAuth(
                signature: signature, deviceCertificateDER: credentials.deviceAuthCertificate.derBytes,
                intermediatesDER: intermediates, signedData: signed, hash: .sha1,
                trustAnchors: [authority.rootCertificate], at: UnixTime.now)
        }
        #expect(throws: DeviceAuthError.emptySignature) {
            try DeviceAuthCheck.verifyDeviceAuth(
                signature: [], deviceCertificateDER: credentials.deviceAuthCertificate.derBytes,
                intermediatesDER: intermediates, signedData: signed, hash: .sha256,
                trustAnchors: [authority.rootCertificate], at: UnixTime.now)
        }
        // An EC device certificate chains fine but is refused: Cast device keys are RSA.
        let ecLeaf = try Certificate.leaf(commonName: "ec", subjectKey: credentials.tlsKey,
                                          issuer: authority.intermediateCertificate, issuerKey: authority.intermediateKey,
                                          notBefore: UnixTime.now - 60, notAfter: UnixTime.now + 3600)
        #expect {
            try DeviceAuthCheck.verifyDeviceAuth(
                signature: try Signature.sign(signed, key: credentials.tlsKey, digest: .sha256),
                deviceCertificateDER: ecLeaf.derBytes, intermediatesDER: intermediates, signedData: signed,
                hash: .sha256, trustAnchors: [authority.rootCertificate], at: UnixTime.now)
        } throws: { error in
            guard case DeviceAuthError.invalidDeviceCertificate(let message) = error else { return false }
            return message.contains("not RSA")
        }
    }
}
