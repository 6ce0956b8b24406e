import SystemCrypto

/// How a simulated device speaks TLS on 8009 and 8443.
///
/// - ``chromecastLegacy``: what the Cast devices seen in public captures do: TLS 1.2 at most, an
///   RSA-2048 certificate, the server's first flight (ServerHello, Certificate,
///   ServerKeyExchange, ServerHelloDone) in one record, no session tickets (node-castv2#25: a
///   Chromecast Audio, 2016). BoringSSL packs a flight into as few records as fit, so the one
///   record comes from the library; tests check it on the wire.
/// - ``modern``: TLS 1.3 allowed, an EC P-256 certificate, session tickets on (TLS 1.3 sends them
///   after the handshake, which a client's reading thread processes while its other thread may
///   be writing: the condition under which pychromecast#1030 shows).
///
/// The default comes from the device model (``defaultProfile(model:)``); docs/simulator.md gives
/// the evidence and its gaps.
public enum DeviceTLSProfile: String, Sendable, Hashable, CaseIterable {
    case chromecastLegacy = "chromecast-legacy"
    case modern

    /// The highest TLS version the device negotiates: `"TLS 1.2"` or `"TLS 1.3"`.
    public var maximumVersion: String { self == .modern ? "TLS 1.3" : "TLS 1.2" }

    /// The kind of key its TLS certificate has.
    public var keyType: DeviceCredentials.TLSKeyType { self == .modern ? .p256 : .rsa2048 }

    /// Whether the device issues session tickets.
    public var issuesSessionTickets: Bool { self == .modern }

    /// Models whose TLS is taken to be ``modern``: the Android TV based devices, whose Cast
    /// receiver runs on Android's TLS stack (TLS 1.3 since Android 10). An inference, not a
    /// capture: see docs/simulator.md. Compared case-insensitively.
    public static let modernModels: Set<String> = ["chromecast with google tv", "google tv streamer"]

    /// The profile a device of `model` gets when its configuration names none.
    public static func defaultProfile(model: String) -> DeviceTLSProfile {
        modernModels.contains(model.lowercased()) ? .modern : .chromecastLegacy
    }

    /// `chromecast-legacy, modern` for help and error texts.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
