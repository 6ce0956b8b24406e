/// `media.mediaCategory` (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct MediaCategory: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `AUDIO`: Audio content.
    public static let audio: MediaCategory = "AUDIO"
    /// `VIDEO`: Video content.
    public static let video: MediaCategory = "VIDEO"
    /// `IMAGE`: Still image.
    public static let image: MediaCategory = "IMAGE"

    public static let knownValues: [MediaCategory] = [
        .audio, .video, .image,
    ]
}
