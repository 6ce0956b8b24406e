/// `media.streamType` (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct StreamType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `BUFFERED`: On-demand content with a duration.
    public static let buffered: StreamType = "BUFFERED"
    /// `LIVE`: Live stream.
    public static let live: StreamType = "LIVE"
    /// `NONE`: No stream type.
    public static let none: StreamType = "NONE"

    public static let knownValues: [StreamType] = [
        .buffered, .live, .none,
    ]
}
