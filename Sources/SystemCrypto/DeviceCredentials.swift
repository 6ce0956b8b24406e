/// Everything one simulated Cast device needs to authenticate:
///
/// 1. its **TLS identity**: a key (``TLSKeyType``: RSA-2048 as on real devices, or EC P-256) and
///    a self-signed certificate (CN = the device id) valid from 60 s before issue for exactly
///    96 h, so openscreen's "at most 4 days" check passes (real devices also use short-lived
///    self-signed certificates);
/// 2. its **device-auth certificate** (CN = the device id, RSA, digitalSignature) issued by the
///    authority's intermediate, plus that intermediate for `AuthResponse.intermediate_certificate`.
///
/// Key choice, for speed (one process simulates 1,000 devices): RSA-2048 generation takes tens of
/// milliseconds where P-256 takes tens of microseconds. So every RSA TLS identity in a process
/// shares one RSA-2048 key (``sharedRSATLSKey``), each with its own certificate, and the
/// device-auth key is the authority's shared RSA-2048 ``SimulatorAuthority/deviceModelKey``,
/// each device with its own certificate for it. Real devices each hold their own keys.
/// Issuing one device's credentials costs one RSA signature (the intermediate's) plus the TLS
/// certificate's signature (RSA or ECDSA): about a millisecond.
public struct DeviceCredentials: Sendable {
    /// The kind of key a TLS identity has.
    public enum TLSKeyType: String, Sendable, Hashable {
        /// RSA-2048, as real Cast devices present (node-castv2#25).
        case rsa2048 = "RSA-2048"
        /// EC P-256: cheaper to generate and sign with.
        case p256 = "EC P-256"
    }

    /// Total lifetime of the TLS certificate (`notAfter − notBefore`): 96 hours.
    package static let tlsLifetime: Int64 = 96 * UnixTime.hour
    /// How long before the issue time the TLS certificate starts (tolerates a sender's clock
    /// running slightly behind).
    package static let tlsBackdate: Int64 = 60
    /// Lifetime of the device-auth certificate (capped at the intermediate's `notAfter`).
    package static let deviceCertificateLifetime: Int64 = 2 * 365 * UnixTime.day
    /// Cast's certificate policy for audio-only devices (openscreen `kAudioOnlyPolicy`): in a
    /// device or intermediate certificate it restricts the device to audio.
    package static let audioOnlyPolicyOID = "1.3.6.1.4.1.11129.2.5.2"

    /// The id the certificates were issued for (their common name, cut to 64 bytes).
    package let deviceID: String
    /// The TLS private key (``tlsKeyType``).
    package let tlsKey: PrivateKey
    /// The self-signed TLS certificate.
    package let tlsCertificate: Certificate
    /// ``tlsCertificate`` as PEM, for `NIOSSLCertificate(bytes:format: .pem)`.
    package let tlsCertificatePEM: String
    /// ``tlsKey`` as PKCS#8 PEM, for `NIOSSLPrivateKey(bytes:format: .pem)`.
    package let tlsPrivateKeyPEM: String
    /// The key that signs device-auth challenges (RSA).
    package let deviceAuthKey: PrivateKey
    /// The device-auth certificate for ``deviceAuthKey``, issued by the first of ``intermediateCertificates``.
    package let deviceAuthCertificate: Certificate
    /// The chain above ``deviceAuthCertificate``, without the root.
    package let intermediateCertificates: [Certificate]

    /// ``tlsCertificate`` in DER: what a sender sees in the handshake, and the tail of the
    /// signed device-auth data.
    public var tlsCertificateDER: [UInt8] { tlsCertificate.derBytes }

    /// Issues fresh credentials for one device.
    /// - Parameters:
    ///   - deviceID: the device's UUID (or name); used as both certificates' common name.
    ///   - authority: the CA that issues the device-auth certificate.
    ///   - now: issue time, seconds since 1970.
    ///   - audioOnly: the device certificate carries Cast's audio-only policy
    ///     (``DeviceCredentials/audioOnlyPolicyOID``), as a speaker's does.
    ///   - tlsKeyType: the TLS key: RSA-2048 (real devices) or EC P-256.
    public static func issue(for deviceID: String, authority: SimulatorAuthority, now: Int64 = UnixTime.now,
                             audioOnly: Bool = false, tlsKeyType: TLSKeyType = .p256) throws(CryptoError) -> DeviceCredentials {
        let name = commonName(for: deviceID)
        let (tlsKey, tlsCertificate) = try makeTLSIdentity(commonName: name, now: now, keyType: tlsKeyType)
        let ica = authority.intermediateCertificate
        let deviceCertificate = try Certificate.leaf(
            commonName: name, subjectKey: authority.deviceModelKey, issuer: ica, issuerKey: authority.intermediateKey,
            notBefore: now - UnixTime.hour, notAfter: min(now + deviceCertificateLifetime, ica.notAfter),
            policies: audioOnly ? [audioOnlyPolicyOID] : [])
        return DeviceCredentials(
            deviceID: name, tlsKey: tlsKey, tlsCertificate: tlsCertificate, tlsCertificatePEM: tlsCertificate.pem,
            tlsPrivateKeyPEM: try tlsKey.pkcs8PEM(), deviceAuthKey: authority.deviceModelKey,
            deviceAuthCertificate: deviceCertificate, intermediateCertificates: [ica])
    }

    /// The same device-auth credentials with a new TLS certificate (and, for P-256, a new key)
    /// valid from `now` (the TLS certificate expires after 96 h; a long-running device must
    /// renew it). The key type stays.
    package func renewingTLSIdentity(now: Int64 = UnixTime.now) throws(CryptoError) -> DeviceCredentials {
        let (key, certificate) = try Self.makeTLSIdentity(commonName: deviceID, now: now, keyType: tlsKeyType)
        return DeviceCredentials(
            deviceID: deviceID, tlsKey: key, tlsCertificate: certificate, tlsCertificatePEM: certificate.pem,
            tlsPrivateKeyPEM: try key.pkcs8PEM(), deviceAuthKey: deviceAuthKey,
            deviceAuthCertificate: deviceAuthCertificate, intermediateCertificates: intermediateCertificates)
    }

    /// What ``tlsKey`` is.
    package var tlsKeyType: TLSKeyType {
        if case .rsa = tlsKey.kind { return .rsa2048 }
        return .p256
    }

    private static func makeTLSIdentity(commonName: String, now: Int64, keyType: TLSKeyType) throws(CryptoError)
        -> (PrivateKey, Certificate) {
        let key: PrivateKey
        var usage: KeyUsage = [.digitalSignature]
        switch keyType {
        case .p256:
            key = try PrivateKey.generateP256()
        case .rsa2048:
            key = try sharedRSATLSKey.get()
            // As an RSA server certificate carries it (RSA key transport, TLS_RSA_* suites).
            usage.insert(.keyEncipherment)
        }
        let start = now - tlsBackdate
        let certificate = try Certificate.selfSigned(commonName: commonName, key: key, notBefore: start,
                                                     notAfter: start + tlsLifetime, keyUsage: usage)
        return (key, certificate)
    }

    /// The RSA-2048 key every RSA TLS identity of this process uses (generated on first use;
    /// a failure is kept and reported to every caller).
    static let sharedRSATLSKey: Result<PrivateKey, CryptoError> = Result { () throws(CryptoError) in
        try PrivateKey.generateRSA(bits: 2048)
    }

    /// `deviceID` cut to at most 64 UTF-8 bytes on a character boundary ("device" when empty):
    /// X.509 limits a common name to 64 characters.
    static func commonName(for deviceID: String) -> String {
        guard !deviceID.isEmpty else { return "device" }
        var name = ""
        for character in deviceID {
            if name.utf8.count + String(character).utf8.count > 64 { break }
            name.append(character)
        }
        return name.isEmpty ? "device" : name
    }
}
