/// A media-namespace LOAD request: play `media` in the app at the connected transportId.
///
/// `json` is the complete message including `type` and `requestId`. `autoplay` sent as the
/// string `"true"`/`"false"` (VLC) decodes as a boolean.
public struct LoadRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    /// pychromecast includes the receiver app's sessionId.
    public var sessionId: String?
    public var media: MediaInformation {
        get { _media.value }
        set { _media = IndirectBox(newValue) }
    }
    private var _media: IndirectBox<MediaInformation>
    public var autoplay: Bool?
    /// Start position in seconds.
    public var currentTime: Double?
    public var activeTrackIds: [Int]?
    public var playbackRate: Double?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, sessionId: String? = nil, media: MediaInformation, autoplay: Bool? = nil,
        currentTime: Double? = nil, activeTrackIds: [Int]? = nil, playbackRate: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.sessionId = sessionId
        self._media = IndirectBox(media)
        self.autoplay = autoplay
        self.currentTime = currentTime
        self.activeTrackIds = activeTrackIds
        self.playbackRate = playbackRate
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var media: MediaInformation?
        var sessionId: String?
        var autoplay: Bool?
        var currentTime: Double?
        var activeTrackIds: [Int]?
        var playbackRate: Double?
        var customData: JSONValue?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestId = try value.decodeRequestID()
            case "sessionId": sessionId = try value.decodeString(key.string)
            case "media": media = try value.decodeModel(key.string)
            case "autoplay": autoplay = try value.decodeBool(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "activeTrackIds": activeTrackIds = try value.decodeInts(key.string)
            case "playbackRate": playbackRate = try value.decodeDouble(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.init(
            requestId: try requireKey(requestId, "requestId"), sessionId: sessionId, media: try requireKey(media, "media"),
            autoplay: autoplay, currentTime: currentTime, activeTrackIds: activeTrackIds, playbackRate: playbackRate,
            customData: customData
        )
    }

    public var json: JSONValue {
        var object = JSONObject.message("LOAD", requestID: requestId, capacity: 8)
        object.put("sessionId", sessionId)
        object.put("media", media)
        object.put("autoplay", autoplay)
        object.put("currentTime", currentTime)
        object.put("activeTrackIds", activeTrackIds)
        object.put("playbackRate", playbackRate)
        object.put("customData", customData)
        return .object(object)
    }
}
