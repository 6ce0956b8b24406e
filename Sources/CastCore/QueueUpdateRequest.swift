/// A media-namespace QUEUE_UPDATE request: jump, select an item, change repeat/shuffle, or
/// update items. pychromecast sends `jump: ±1` for next/previous.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueUpdateRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var mediaSessionID: Int
    /// Relative move in the queue (+1 next, -1 previous).
    public var jump: Int?
    public var currentItemID: Int?
    public var repeatMode: RepeatMode?
    public var shuffle: Bool?
    public var currentTime: Double?
    public var items: [QueueItem]?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, mediaSessionID: Int, jump: Int? = nil, currentItemID: Int? = nil,
        repeatMode: RepeatMode? = nil, shuffle: Bool? = nil, currentTime: Double? = nil,
        items: [QueueItem]? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.jump = jump
        self.currentItemID = currentItemID
        self.repeatMode = repeatMode
        self.shuffle = shuffle
        self.currentTime = currentTime
        self.items = items
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var mediaSessionID: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            case "jump": jump = try value.decodeInt(key.string)
            case "currentItemId": currentItemID = try value.decodeInt(key.string)
            case "repeatMode": repeatMode = try value.decodeEnum(key.string)
            case "shuffle": shuffle = try value.decodeBool(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "items": items = try value.decodeModels(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.mediaSessionID = try requireKey(mediaSessionID, "mediaSessionId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_UPDATE", requestID: requestID, capacity: 8)
        object.put("mediaSessionId", mediaSessionID)
        object.put("jump", jump)
        object.put("currentItemId", currentItemID)
        object.put("repeatMode", repeatMode)
        object.put("shuffle", shuffle)
        object.put("currentTime", currentTime)
        object.put("items", items)
        object.put("customData", customData)
        return .object(object)
    }
}
