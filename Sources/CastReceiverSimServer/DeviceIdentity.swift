import CastDeviceAuth
import NIOSSL
import SystemCrypto

/// What a device presents on TLS (8009 and 8443) and signs in device auth. The TLS certificate
/// lives 96 h like a real device's, so a long-running device renews it (``renewed()``): new
/// connections get the new identity, open ones keep the one they were accepted with, and device
/// auth on a connection always signs that connection's certificate.
struct DeviceIdentity: Sendable {
    let credentials: DeviceCredentials
    let tls: NIOSSLContext
    let authResponder: DeviceAuthResponder
    /// Version cap, key type and tickets of ``tls``.
    let profile: DeviceTLSProfile
    private let authority: SimulatorAuthority

    /// A fresh identity for device `uuid`, its device-auth certificate issued by `authority`'s ICA
    /// (with the audio-only policy for a speaker, as real audio devices carry it), its TLS as
    /// `profile` says.
    static func issue(for uuid: String, authority: SimulatorAuthority, audioOnly: Bool = false,
                      profile: DeviceTLSProfile = .chromecastLegacy) throws -> DeviceIdentity {
        try DeviceIdentity(credentials: DeviceCredentials.issue(for: uuid, authority: authority, audioOnly: audioOnly,
                                                                tlsKeyType: profile.keyType),
                           authority: authority, profile: profile)
    }

    private init(credentials: DeviceCredentials, authority: SimulatorAuthority, profile: DeviceTLSProfile) throws {
        self.credentials = credentials
        self.authority = authority
        self.profile = profile
        tls = try Self.makeContext(credentials: credentials, profile: profile)
        authResponder = DeviceAuthResponder(credentials: credentials, authority: authority)
    }

    /// The server context: `credentials`' certificate and key, capped at TLS 1.2 and without
    /// session tickets for the legacy profile.
    static func makeContext(credentials: DeviceCredentials, profile: DeviceTLSProfile) throws -> NIOSSLContext {
        let certificate = try NIOSSLCertificate(bytes: Array(credentials.tlsCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(credentials.tlsPrivateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)],
                                                                     privateKey: .privateKey(key))
        if profile == .chromecastLegacy { configuration.maximumTLSVersion = .tlsv12 }
        let context = try NIOSSLContext(configuration: configuration)
        if !profile.issuesSessionTickets { try BoringSSLContextOptions.disableSessionTickets(context) }
        return context
    }

    /// The same device-auth key and certificate with a new TLS certificate valid from `now`,
    /// same profile.
    func renewed(now: Int64 = UnixTime.now) throws -> DeviceIdentity {
        try DeviceIdentity(credentials: credentials.renewingTLSIdentity(now: now), authority: authority, profile: profile)
    }

    /// When the TLS certificate expires (Unix seconds).
    var expires: Int64 { credentials.tlsCertificate.notAfter }
}
