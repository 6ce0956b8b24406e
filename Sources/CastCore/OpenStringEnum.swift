/// A string-valued wire enum that keeps values it does not know ("open enum").
///
/// Conforming types are structs holding `rawValue`; unknown strings decode as themselves and
/// re-encode unchanged. ``knownValues`` lists the documented values.
public protocol OpenStringEnum: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String, StringLiteralType == String {
    /// Wraps any string (never fails).
    init(rawValue: String)
    /// The documented values, in declaration order.
    static var knownValues: [Self] { get }
}

extension OpenStringEnum {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public var description: String { rawValue }

    /// `true` when the value is one of ``knownValues``.
    public var isKnown: Bool { Self.knownValues.contains(self) }
}
