/// `connType` of a CONNECT request (open integer enum).
///
/// Unknown integers are preserved: they decode as themselves and re-encode unchanged.
///
/// Strong connections keep the app alive; weak ones let it stop when only weak ones remain; invisible ones get no connect/disconnect notifications.
public struct ConnectionType: OpenIntEnum {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `0` STRONG
    public static let strong: ConnectionType = 0
    /// `1` WEAK
    public static let weak: ConnectionType = 1
    /// `2` INVISIBLE
    public static let invisible: ConnectionType = 2

    public static let knownNames: [(value: Int, name: String)] = [
        (0, "STRONG"),
        (1, "WEAK"),
        (2, "INVISIBLE"),
    ]
}
