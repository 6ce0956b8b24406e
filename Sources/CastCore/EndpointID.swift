/// A virtual-connection endpoint id: `sender-0`, `receiver-0`, `*` or an app's transportId.
///
/// Value type, `Sendable`. Used as `source_id` / `destination_id` of a `CastMessage`.
public struct EndpointID: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Same as ``init(rawValue:)``.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    /// The default sender id every common sender uses.
    public static let sender0: EndpointID = "sender-0"
    /// The platform receiver (device) endpoint.
    public static let receiver0: EndpointID = "receiver-0"
    /// Broadcast destination: status updates addressed to every connected sender.
    public static let broadcast: EndpointID = "*"

    /// `true` for `*`.
    public var isBroadcast: Bool { rawValue == "*" }

    /// `true` for the `sender-…` ids senders use.
    public var isSender: Bool { rawValue.hasPrefix("sender-") }

    public var description: String { rawValue }
}
