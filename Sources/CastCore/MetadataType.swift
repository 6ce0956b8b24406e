/// `metadata.metadataType` (open integer enum).
///
/// Unknown integers are preserved: they decode as themselves and re-encode unchanged.
///
/// Selects which metadata keys apply; see ``MediaMetadata``.
public struct MetadataType: OpenIntEnum {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `0` GENERIC
    public static let generic: MetadataType = 0
    /// `1` MOVIE
    public static let movie: MetadataType = 1
    /// `2` TV_SHOW
    public static let tvShow: MetadataType = 2
    /// `3` MUSIC_TRACK
    public static let musicTrack: MetadataType = 3
    /// `4` PHOTO
    public static let photo: MetadataType = 4

    public static let knownNames: [(value: Int, name: String)] = [
        (0, "GENERIC"),
        (1, "MOVIE"),
        (2, "TV_SHOW"),
        (3, "MUSIC_TRACK"),
        (4, "PHOTO"),
    ]
}
