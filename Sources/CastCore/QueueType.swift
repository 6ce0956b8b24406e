/// `queueData.queueType` (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct QueueType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `ALBUM`: Music album.
    public static let album: QueueType = "ALBUM"
    /// `PLAYLIST`: Music playlist.
    public static let playlist: QueueType = "PLAYLIST"
    /// `AUDIOBOOK`: Audiobook chapters.
    public static let audiobook: QueueType = "AUDIOBOOK"
    /// `RADIO_STATION`: Radio station.
    public static let radioStation: QueueType = "RADIO_STATION"
    /// `PODCAST_SERIES`: Podcast episodes.
    public static let podcastSeries: QueueType = "PODCAST_SERIES"
    /// `TV_SERIES`: TV episodes.
    public static let tvSeries: QueueType = "TV_SERIES"
    /// `VIDEO_PLAYLIST`: Video playlist.
    public static let videoPlaylist: QueueType = "VIDEO_PLAYLIST"
    /// `LIVE_TV`: Live TV channel.
    public static let liveTV: QueueType = "LIVE_TV"
    /// `MOVIE`: Movie.
    public static let movie: QueueType = "MOVIE"

    public static let knownValues: [QueueType] = [
        .album, .playlist, .audiobook, .radioStation, .podcastSeries, .tvSeries, .videoPlaylist, .liveTV, .movie,
    ]
}
