/// One sender TCP connection to a simulated device, as numbered by the server.
///
/// A connection carries any number of virtual connections (sender id × endpoint). Value type.
public struct SenderConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: SenderConnectionID, rhs: SenderConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }
}
