/// `tracks[].type` (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct TrackType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `TEXT`: Subtitles, captions and other text.
    public static let text: TrackType = "TEXT"
    /// `AUDIO`: Audio track.
    public static let audio: TrackType = "AUDIO"
    /// `VIDEO`: Video track.
    public static let video: TrackType = "VIDEO"

    public static let knownValues: [TrackType] = [
        .text, .audio, .video,
    ]
}
