/// `media.metadata`: descriptive data whose applicable keys depend on ``metadataType``.
///
/// One struct for all five metadata types (GENERIC, MOVIE, TV_SHOW, MUSIC_TRACK, PHOTO); members
/// that do not apply stay nil. Keys this type does not model (pychromecast's `thumb`, app
/// extensions) are kept in ``extra`` and re-encoded after the known keys, so nothing is lost.
/// A missing `metadataType` (devices send `metadata: {}`) decodes as `.generic`.
public struct MediaMetadata: CastPayloadModel, Hashable {
    public var metadataType: MetadataType
    public var title: String?
    public var subtitle: String?
    public var images: [Image]
    /// ISO 8601 date.
    public var releaseDate: String?
    /// MOVIE.
    public var studio: String?
    /// TV_SHOW.
    public var seriesTitle: String?
    public var season: Int?
    public var episode: Int?
    public var originalAirDate: String?
    /// MUSIC_TRACK.
    public var albumName: String?
    public var albumArtist: String?
    /// MUSIC_TRACK and PHOTO.
    public var artist: String?
    public var composer: String?
    public var trackNumber: Int?
    public var discNumber: Int?
    /// PHOTO.
    public var location: String?
    public var latitude: Double?
    public var longitude: Double?
    public var width: Int?
    public var height: Int?
    public var creationDateTime: String?
    /// Members with keys not listed above, in wire order.
    public var extra: JSONObject

    public init(
        metadataType: MetadataType = .generic, title: String? = nil, subtitle: String? = nil,
        images: [Image] = [], releaseDate: String? = nil, extra: JSONObject = JSONObject()
    ) {
        self.metadataType = metadataType
        self.title = title
        self.subtitle = subtitle
        self.images = images
        self.releaseDate = releaseDate
        self.extra = extra
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        self.init()
        for (key, value) in try json.modelObject() {
            switch key {
            case "metadataType": metadataType = try value.decodeIntEnum(key.string) ?? .generic
            case "title": title = try value.decodeString(key.string)
            case "subtitle": subtitle = try value.decodeString(key.string)
            case "images": images = try value.decodeModels(key.string) ?? []
            case "releaseDate": releaseDate = try value.decodeString(key.string)
            case "studio": studio = try value.decodeString(key.string)
            case "seriesTitle": seriesTitle = try value.decodeString(key.string)
            case "season": season = try value.decodeInt(key.string)
            case "episode": episode = try value.decodeInt(key.string)
            case "originalAirDate": originalAirDate = try value.decodeString(key.string)
            case "albumName": albumName = try value.decodeString(key.string)
            case "albumArtist": albumArtist = try value.decodeString(key.string)
            case "artist": artist = try value.decodeString(key.string)
            case "composer": composer = try value.decodeString(key.string)
            case "trackNumber": trackNumber = try value.decodeInt(key.string)
            case "discNumber": discNumber = try value.decodeInt(key.string)
            case "location": location = try value.decodeString(key.string)
            case "latitude": latitude = try value.decodeDouble(key.string)
            case "longitude": longitude = try value.decodeDouble(key.string)
            case "width": width = try value.decodeInt(key.string)
            case "height": height = try value.decodeInt(key.string)
            case "creationDateTime": creationDateTime = try value.decodeString(key.string)
            default: extra.append(key: key.string, value: value)
            }
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(6 + extra.count)
        object.put("metadataType", metadataType)
        object.put("title", title)
        object.put("subtitle", subtitle)
        if !images.isEmpty { object.put("images", images) }
        object.put("releaseDate", releaseDate)
        object.put("studio", studio)
        object.put("seriesTitle", seriesTitle)
        object.put("season", season)
        object.put("episode", episode)
        object.put("originalAirDate", originalAirDate)
        object.put("albumName", albumName)
        object.put("albumArtist", albumArtist)
        object.put("artist", artist)
        object.put("composer", composer)
        object.put("trackNumber", trackNumber)
        object.put("discNumber", discNumber)
        object.put("location", location)
        object.put("latitude", latitude)
        object.put("longitude", longitude)
        object.put("width", width)
        object.put("height", height)
        object.put("creationDateTime", creationDateTime)
        for (key, value) in extra { object.append(key: key, value: value) }
        return .object(object)
    }
}
