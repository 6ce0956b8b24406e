/// A Cast channel namespace such as `urn:x-cast:com.google.cast.media`.
///
/// Value type, `Sendable`. Any string is accepted (custom app namespaces included); the static
/// members name the platform and built-in ones.
public struct CastNamespace: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The `urn:x-cast:` prefix every Cast namespace carries.
    public static let urnPrefix = "urn:x-cast:"

    /// The full namespace string as it appears in `CastMessage.namespace`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Same as ``init(rawValue:)``.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    /// Virtual connections: CONNECT, CLOSE, CONNECTED.
    public static let connection: CastNamespace = "urn:x-cast:com.google.cast.tp.connection"
    /// PING / PONG keep-alive.
    public static let heartbeat: CastNamespace = "urn:x-cast:com.google.cast.tp.heartbeat"
    /// Binary device-authentication challenge and response.
    public static let deviceAuth: CastNamespace = "urn:x-cast:com.google.cast.tp.deviceauth"
    /// The platform receiver: launch, stop, status, device volume.
    public static let receiver: CastNamespace = "urn:x-cast:com.google.cast.receiver"
    /// Media control of a running app.
    public static let media: CastNamespace = "urn:x-cast:com.google.cast.media"
    /// Speaker-group (multizone) status.
    public static let multizone: CastNamespace = "urn:x-cast:com.google.cast.multizone"

    /// The part after `urn:x-cast:` (`com.google.cast.media`); the whole string when the prefix is missing.
    public var tail: String {
        if rawValue.hasPrefix(Self.urnPrefix) { return String(rawValue.dropFirst(Self.urnPrefix.count)) }
        return rawValue
    }

    /// `true` for the transport-level platform namespaces (`com.google.cast.tp.*`).
    public var isPlatform: Bool { rawValue.hasPrefix("urn:x-cast:com.google.cast.tp.") }

    /// `true` when the string starts with `urn:x-cast:` and has something after it.
    public var hasCastPrefix: Bool { rawValue.hasPrefix(Self.urnPrefix) && rawValue.utf8.count > Self.urnPrefix.utf8.count }

    public var description: String { rawValue }
}
