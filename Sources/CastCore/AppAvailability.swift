/// Per-app answer in a GET_APP_AVAILABILITY reply (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct AppAvailability: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `APP_AVAILABLE`: The app can be launched.
    public static let available: AppAvailability = "APP_AVAILABLE"
    /// `APP_UNAVAILABLE`: The app cannot be launched.
    public static let unavailable: AppAvailability = "APP_UNAVAILABLE"

    public static let knownValues: [AppAvailability] = [
        .available, .unavailable,
    ]
}
