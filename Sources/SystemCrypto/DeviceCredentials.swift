/// Everything one simulated Cast device needs to authenticate:
///
/// 1. its **TLS identity**: an EC P-256 key and a self-signed certificate (CN = the device id)
///    valid from 60 s before issue for exactly 96 h, so openscreen's "at most 4 days" check
///    passes (real devices also use short-lived self-signed certificates, though RSA ones);
/// 2. its **device-auth certificate** (CN = the device id, RSA, digitalSignature) issued by the
///    authority's intermediate, plus that intermediate for `AuthResponse.intermediate_certificate`.
///
/// Key choice, for speed (one process simulates 1,000 devices): P-256 generation and signing
/// take tens of microseconds where RSA-2048 generation takes tens of milliseconds. The
/// device-auth key is the authority's shared RSA-2048 ``SimulatorAuthority/deviceModelKey``;
/// each device gets its own certificate for it. Real devices each hold their own key.
/// Issuing one device's credentials costs one RSA signature (the intermediate's) and two
/// ECDSA operations: about half a millisecond.
public struct DeviceCredentials: Sendable {
    /// Total lifetime of the TLS certificate (`notAfter − notBefore`): 96 hours.
    public static let tlsLifetime: Int64 = 96 * UnixTime.hour
    /// How long before the issue time the TLS certificate starts (tolerates a sender's clock
    /// running slightly behind).
    public static let tlsBackdate: Int64 = 60
    /// Lifetime of the device-auth certificate (capped at the intermediate's `notAfter`).
    public static let deviceCertificateLifetime: Int64 = 2 * 365 * UnixTime.day
    /// Cast's certificate policy for audio-only devices (openscreen `kAudioOnlyPolicy`): in a
    /// device or intermediate certificate it restricts the device to audio.
    public static let audioOnlyPolicyOID = "1.3.6.1.4.1.11129.2.5.2"

    /// The id the certificates were issued for (their common name, cut to 64 bytes).
    public let deviceID: String
    /// The TLS private key (EC P-256).
    public let tlsKey: PrivateKey
    /// The self-signed TLS certificate.
    public let tlsCertificate: Certificate
    /// ``tlsCertificate`` as PEM, for `NIOSSLCertificate(bytes:format: .pem)`.
    public let tlsCertificatePEM: String
    /// ``tlsKey`` as PKCS#8 PEM, for `NIOSSLPrivateKey(bytes:format: .pem)`.
    public let tlsPrivateKeyPEM: String
    /// The key that signs device-auth challenges (RSA).
    public let deviceAuthKey: PrivateKey
    /// The device-auth certificate for ``deviceAuthKey``, issued by the first of ``intermediateCertificates``.
    public let deviceAuthCertificate: Certificate
    /// The chain above ``deviceAuthCertificate``, without the root.
    public let intermediateCertificates: [Certificate]

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
    public static func issue(for deviceID: String, authority: SimulatorAuthority, now: Int64 = UnixTime.now,
                             audioOnly: Bool = false) throws(CryptoError) -> DeviceCredentials {
        let name = commonName(for: deviceID)
        let (tlsKey, tlsCertificate) = try makeTLSIdentity(commonName: name, now: now)
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

    /// The same device-auth credentials with a new TLS key and certificate valid from `now`
    /// (the TLS certificate expires after 96 h; a long-running device must renew it).
    public func renewingTLSIdentity(now: Int64 = UnixTime.now) throws(CryptoError) -> DeviceCredentials {
        let (key, certificate) = try Self.makeTLSIdentity(commonName: deviceID, now: now)
        return DeviceCredentials(
            deviceID: deviceID, tlsKey: key, tlsCertificate: certificate, tlsCertificatePEM: certificate.pem,
            tlsPrivateKeyPEM: try key.pkcs8PEM(), deviceAuthKey: deviceAuthKey,
            deviceAuthCertificate: deviceAuthCertificate, intermediateCertificates: intermediateCertificates)
    }

    private static func makeTLSIdentity(commonName: String, now: Int64) throws(CryptoError) -> (PrivateKey, Certificate) {
        let key = try PrivateKey.generateP256()
        let start = now - tlsBackdate
        let certificate = try Certificate.selfSigned(commonName: commonName, key: key, notBefore: start,
                                                     notAfter: start + tlsLifetime)
        return (key, certificate)
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
