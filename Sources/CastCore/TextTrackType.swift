/// `tracks[].subtype` of a TEXT track (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct TextTrackType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `SUBTITLES`: Translated dialogue.
    public static let subtitles: TextTrackType = "SUBTITLES"
    /// `CAPTIONS`: Transcription for the hard of hearing.
    public static let captions: TextTrackType = "CAPTIONS"
    /// `DESCRIPTIONS`: Text descriptions of the video.
    public static let descriptions: TextTrackType = "DESCRIPTIONS"
    /// `CHAPTERS`: Chapter titles.
    public static let chapters: TextTrackType = "CHAPTERS"
    /// `METADATA`: Machine-readable data.
    public static let metadata: TextTrackType = "METADATA"

    public static let knownValues: [TextTrackType] = [
        .subtitles, .captions, .descriptions, .chapters, .metadata,
    ]
}
