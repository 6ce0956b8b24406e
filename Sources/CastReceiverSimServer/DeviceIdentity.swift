import CastDeviceAuth
import Glibc
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
    private let authority: SimulatorAuthority

    /// A fresh identity for device `uuid`, its device-auth certificate issued by `authority`'s ICA
    /// (with the audio-only policy for a speaker, as real audio devices carry it).
    static func issue(for uuid: String, authority: SimulatorAuthority, audioOnly: Bool = false) throws -> DeviceIdentity {
        let rsa = experiment.contains("rsa")
        return try DeviceIdentity(credentials: DeviceCredentials.issue(for: uuid, authority: authority, audioOnly: audioOnly,
                                                                      tlsKeyType: rsa ? .rsa2048 : .p256),
                                  authority: authority)
    }

    static let experiment: String = getenv("CASTLINE_SIM_TLS_EXPERIMENT").map { String(cString: $0) } ?? ""

    private init(credentials: DeviceCredentials, authority: SimulatorAuthority) throws {
        self.credentials = credentials
        self.authority = authority
        let certificate = try NIOSSLCertificate(bytes: Array(credentials.tlsCertificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(credentials.tlsPrivateKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)],
                                                                     privateKey: .privateKey(key))
        if Self.experiment.contains("tls12") { configuration.maximumTLSVersion = .tlsv12 }
        tls = try NIOSSLContext(configuration: configuration)
        if Self.experiment.contains("notickets") { try BoringSSLContextOptions.disableSessionTickets(tls) }
        authResponder = DeviceAuthResponder(credentials: credentials, authority: authority)
    }

    /// The same device-auth key and certificate with a new TLS key and certificate valid from `now`.
    func renewed(now: Int64 = UnixTime.now) throws -> DeviceIdentity {
        try DeviceIdentity(credentials: credentials.renewingTLSIdentity(now: now), authority: authority)
    }

    /// When the TLS certificate expires (Unix seconds).
    var expires: Int64 { credentials.tlsCertificate.notAfter }
}
