/// A media-namespace LOAD request: play `media` in the app at the connected transportId.
///
/// `json` is the complete message including `type` and `requestId`. `autoplay` sent as the
/// string `"true"`/`"false"` (VLC) decodes as a boolean.
public struct LoadRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    /// pychromecast includes the receiver app's sessionId.
    public var sessionID: String?
    public var media: MediaInformation {
        get { _media.value }
        set { _media = IndirectBox(newValue) }
    }
    private var _media: IndirectBox<MediaInformation>
    public var autoplay: Bool?
    /// Start position in seconds.
    public var currentTime: Double?
    public var activeTrackIDs: [Int]?
    public var playbackRate: Double?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, sessionID: String? = nil, media: MediaInformation, autoplay: Bool? = nil,
        currentTime: Double? = nil, activeTrackIDs: [Int]? = nil, playbackRate: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.sessionID = sessionID
        self._media = IndirectBox(media)
        self.autoplay = autoplay
        self.currentTime = currentTime
        self.activeTrackIDs = activeTrackIDs
        self.playbackRate = playbackRate
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var media: MediaInformation?
        var sessionID: String?
        var autoplay: Bool?
        var currentTime: Double?
        var activeTrackIDs: [Int]?
        var playbackRate: Double?
        var customData: JSONValue?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "sessionId": sessionID = try value.decodeString(key.string)
            case "media": media = try value.decodeModel(key.string)
            case "autoplay": autoplay = try value.decodeBool(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "activeTrackIds": activeTrackIDs = try value.decodeInts(key.string)
            case "playbackRate": playbackRate = try value.decodeDouble(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.init(
            requestID: try requireKey(requestID, "requestId"), sessionID: sessionID, media: try requireKey(media, "media"),
            autoplay: autoplay, currentTime: currentTime, activeTrackIDs: activeTrackIDs, playbackRate: playbackRate,
            customData: customData
        )
    }

    public var json: JSONValue {
        var object = JSONObject.message("LOAD", requestID: requestID, capacity: 8)
        object.put("sessionId", sessionID)
        object.put("media", media)
        object.put("autoplay", autoplay)
        object.put("currentTime", currentTime)
        object.put("activeTrackIds", activeTrackIDs)
        object.put("playbackRate", playbackRate)
        object.put("customData", customData)
        return .object(object)
    }
}
