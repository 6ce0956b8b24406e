import CastCore

/// Builds a ``MediaInformation`` step by step (GCKMediaInformationBuilder) and checks it.
///
/// ```swift
/// let media = try MediaInformationBuilder(contentURL: "https://example.com/movie.mp4")
///     .contentType("video/mp4").movie(title: "Big Buck Bunny", studio: "Blender")
///     .image("https://example.com/poster.jpg", width: 480, height: 720).duration(596).build()
/// ```
public struct MediaInformationBuilder: Sendable {
    /// What ``build()`` refuses.
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case emptyContentID
        case invalidDuration(Double)
        case duplicateTrackID(Int)

        public var description: String {
            switch self {
            case .emptyContentID: return "the content id / URL is empty"
            case .invalidDuration(let value): return "duration \(value) is not a finite number ≥ 0"
            case .duplicateTrackID(let id): return "track id \(id) is used twice"
            }
        }
    }

    private var media: MediaInformation
    private var metadata: MediaMetadata?
    private var streamTypeSet = false

    /// `contentID`: a URL or an app-specific id.
    public init(contentID: String) {
        media = MediaInformation(contentID: contentID, contentType: "")
    }

    /// The content is a URL: it becomes both `contentId` and `contentUrl`.
    public init(contentURL: String) {
        media = MediaInformation(contentID: contentURL, contentURL: contentURL, contentType: "")
    }

    public func contentURL(_ url: String) -> Self { copy { $0.media.contentURL = url } }
    public func streamType(_ type: StreamType) -> Self {
        copy {
            $0.media.streamType = type
            $0.streamTypeSet = true
        }
    }

    /// Fills what a media-format probe found and the caller did not set: contentType (when
    /// empty) and streamType (when not set explicitly). Explicit values always win.
    public func applying(_ format: MediaFormatInfo) -> Self {
        copy {
            if $0.media.contentType.isEmpty, let type = format.contentType { $0.media.contentType = type }
            if !$0.streamTypeSet, let type = format.streamType { $0.media.streamType = type }
        }
    }
    public func contentType(_ type: String) -> Self { copy { $0.media.contentType = type } }
    public func duration(_ seconds: Double) -> Self { copy { $0.media.duration = seconds } }
    public func tracks(_ tracks: [MediaTrack]) -> Self { copy { $0.media.tracks = tracks } }
    public func customData(_ data: JSONValue) -> Self { copy { $0.media.customData = data } }
    public func metadata(_ metadata: MediaMetadata) -> Self { copy { $0.metadata = metadata } }

    public func generic(title: String, subtitle: String? = nil) -> Self {
        copy { $0.metadata = MediaMetadata(metadataType: .generic, title: title, subtitle: subtitle, images: $0.metadata?.images ?? []) }
    }

    public func movie(title: String, subtitle: String? = nil, studio: String? = nil, releaseDate: String? = nil) -> Self {
        copy {
            var metadata = MediaMetadata(metadataType: .movie, title: title, subtitle: subtitle, images: $0.metadata?.images ?? [],
                                         releaseDate: releaseDate)
            metadata.studio = studio
            $0.metadata = metadata
        }
    }

    public func tvShow(title: String, seriesTitle: String? = nil, season: Int? = nil, episode: Int? = nil) -> Self {
        copy {
            var metadata = MediaMetadata(metadataType: .tvShow, title: title, images: $0.metadata?.images ?? [])
            metadata.seriesTitle = seriesTitle
            metadata.season = season
            metadata.episode = episode
            $0.metadata = metadata
        }
    }

    public func musicTrack(title: String, artist: String? = nil, albumName: String? = nil, trackNumber: Int? = nil) -> Self {
        copy {
            var metadata = MediaMetadata(metadataType: .musicTrack, title: title, images: $0.metadata?.images ?? [])
            metadata.artist = artist
            metadata.albumName = albumName
            metadata.trackNumber = trackNumber
            $0.metadata = metadata
        }
    }

    public func photo(title: String, location: String? = nil, width: Int? = nil, height: Int? = nil) -> Self {
        copy {
            var metadata = MediaMetadata(metadataType: .photo, title: title, images: $0.metadata?.images ?? [])
            metadata.location = location
            metadata.width = width
            metadata.height = height
            $0.metadata = metadata
        }
    }

    /// Adds an image to the metadata (a generic metadata is created when none is set).
    public func image(_ url: String, width: Int? = nil, height: Int? = nil) -> Self {
        copy {
            var metadata = $0.metadata ?? MediaMetadata()
            metadata.images.append(Image(url: url, width: width, height: height))
            $0.metadata = metadata
        }
    }

    /// The media, checked: non-empty content id, finite non-negative duration, unique track ids.
    public func build() throws(Error) -> MediaInformation {
        var result = media
        guard !result.contentID.isEmpty else { throw .emptyContentID }
        if let duration = result.duration, !(duration.isFinite && duration >= 0) { throw .invalidDuration(duration) }
        var seen = Set<Int>()
        for track in result.tracks where !seen.insert(track.trackID).inserted { throw .duplicateTrackID(track.trackID) }
        result.metadata = metadata
        return result
    }

    private func copy(_ change: (inout Self) -> Void) -> Self {
        var next = self
        change(&next)
        return next
    }
}
