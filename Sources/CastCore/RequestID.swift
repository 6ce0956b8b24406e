/// The `requestId` that pairs a request with its reply.
///
/// Value type, `Sendable`. `0` means unsolicited (a broadcast status not answering any request);
/// request generators never hand out 0 (see ``next()``).
public struct RequestID: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Same as ``init(rawValue:)``.
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    public init(integerLiteral value: Int) { self.rawValue = value }

    /// The id of unsolicited messages (`requestId: 0`).
    public static let unsolicited = RequestID(rawValue: 0)

    /// Largest id a generator hands out before wrapping to 1 (stays exact in a JavaScript number
    /// and in a 32-bit signed int, which some receivers use).
    public static let maxGenerated = RequestID(rawValue: Int(Int32.max))

    /// `true` for `requestId: 0`.
    public var isUnsolicited: Bool { rawValue == 0 }

    /// The following id: `rawValue + 1`, wrapping from ``maxGenerated`` (or anything outside
    /// 1…maxGenerated) to 1, so it is never 0.
    public func next() -> RequestID {
        guard rawValue >= 1, rawValue < Self.maxGenerated.rawValue else { return RequestID(rawValue: 1) }
        return RequestID(rawValue: rawValue + 1)
    }

    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }
}
