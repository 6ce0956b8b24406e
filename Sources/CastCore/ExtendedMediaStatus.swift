/// `extendedStatus` of a MEDIA_STATUS entry: the state of media being loaded (or, for apps like
/// Spotify, the media itself when the top-level `media` is absent).
public struct ExtendedMediaStatus: CastPayloadModel, Hashable {
    /// Typically `LOADING`.
    public var playerState: PlayerState
    public var media: MediaInformation? {
        get { _media?.value }
        set { _media = newValue.map(IndirectBox.init) }
    }
    private var _media: IndirectBox<MediaInformation>?
    public var mediaSessionID: Int?

    public init(playerState: PlayerState, media: MediaInformation? = nil, mediaSessionID: Int? = nil) {
        self.playerState = playerState
        self._media = media.map(IndirectBox.init)
        self.mediaSessionID = mediaSessionID
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var playerState: PlayerState?
        var media: MediaInformation?
        var mediaSessionID: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "playerState": playerState = try value.decodeEnum(key.string)
            case "media": media = try value.decodeModel(key.string)
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            default: break
            }
        }
        self.init(playerState: try requireKey(playerState, "playerState"), media: media, mediaSessionID: mediaSessionID)
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(3)
        object.put("playerState", playerState)
        object.put("media", media)
        object.put("mediaSessionId", mediaSessionID)
        return .object(object)
    }
}
