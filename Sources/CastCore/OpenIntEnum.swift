/// An integer-valued wire enum that keeps values it does not know ("open enum").
///
/// Conforming types are structs holding `rawValue`; unknown integers decode as themselves and
/// re-encode unchanged. ``knownNames`` maps the documented values to their names.
public protocol OpenIntEnum: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral
where RawValue == Int, IntegerLiteralType == Int {
    /// Wraps any integer (never fails).
    init(rawValue: Int)
    /// The documented values and their upper-case names, in declaration order.
    static var knownNames: [(value: Int, name: String)] { get }
}

extension OpenIntEnum {
    public init(integerLiteral value: Int) { self.init(rawValue: value) }

    /// Looks a value up by its documented name (`"MOVIE"`); nil for unknown names.
    public init?(name: String) {
        guard let entry = Self.knownNames.first(where: { $0.name == name }) else { return nil }
        self.init(rawValue: entry.value)
    }

    /// The documented name, or nil for an unknown value.
    public var name: String? { Self.knownNames.first { $0.value == rawValue }?.name }

    /// `true` when the value has a documented name.
    public var isKnown: Bool { name != nil }

    /// The documented value list.
    public static var knownValues: [Self] { knownNames.map { Self(rawValue: $0.value) } }

    /// `NAME(n)` for known values, the bare number otherwise.
    public var description: String {
        if let name { return "\(name)(\(rawValue))" }
        return String(rawValue)
    }
}
