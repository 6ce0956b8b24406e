/// One entry of a media queue (`items[]` of QUEUE_LOAD / QUEUE_INSERT / MEDIA_STATUS).
public struct QueueItem: CastPayloadModel, Hashable {
    /// Assigned by the receiver; absent in items a sender inserts.
    public var itemID: Int?
    public var media: MediaInformation? {
        get { _media?.value }
        set { _media = newValue.map(IndirectBox.init) }
    }
    private var _media: IndirectBox<MediaInformation>?
    public var autoplay: Bool?
    /// Seconds from the start of the media.
    public var startTime: Double?
    /// Seconds before the end of the previous item at which to preload this one.
    public var preloadTime: Double?
    /// Seconds to play; absent = to the end.
    public var playbackDuration: Double?
    public var activeTrackIDs: [Int]?
    public var customData: JSONValue?

    public init(
        itemID: Int? = nil, media: MediaInformation? = nil, autoplay: Bool? = nil, startTime: Double? = nil,
        preloadTime: Double? = nil, playbackDuration: Double? = nil, activeTrackIDs: [Int]? = nil,
        customData: JSONValue? = nil
    ) {
        self.itemID = itemID
        self._media = media.map(IndirectBox.init)
        self.autoplay = autoplay
        self.startTime = startTime
        self.preloadTime = preloadTime
        self.playbackDuration = playbackDuration
        self.activeTrackIDs = activeTrackIDs
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        self.init()
        for (key, value) in try json.modelObject() {
            switch key {
            case "itemId": itemID = try value.decodeInt(key.string)
            case "media": media = try value.decodeModel(key.string)
            case "autoplay": autoplay = try value.decodeBool(key.string)
            case "startTime": startTime = try value.decodeDouble(key.string)
            case "preloadTime": preloadTime = try value.decodeDouble(key.string)
            case "playbackDuration": playbackDuration = try value.decodeDouble(key.string)
            case "activeTrackIds": activeTrackIDs = try value.decodeInts(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(4)
        object.put("itemId", itemID)
        object.put("media", media)
        object.put("autoplay", autoplay)
        object.put("startTime", startTime)
        object.put("preloadTime", preloadTime)
        object.put("playbackDuration", playbackDuration)
        object.put("activeTrackIds", activeTrackIDs)
        object.put("customData", customData)
        return .object(object)
    }
}
