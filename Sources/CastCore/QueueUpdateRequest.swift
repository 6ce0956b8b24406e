/// A media-namespace QUEUE_UPDATE request: jump, select an item, change repeat/shuffle, or
/// update items. pychromecast sends `jump: ±1` for next/previous.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueUpdateRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var mediaSessionId: Int
    /// Relative move in the queue (+1 next, -1 previous).
    public var jump: Int?
    public var currentItemId: Int?
    public var repeatMode: RepeatMode?
    public var shuffle: Bool?
    public var currentTime: Double?
    public var items: [QueueItem]?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, mediaSessionId: Int, jump: Int? = nil, currentItemId: Int? = nil,
        repeatMode: RepeatMode? = nil, shuffle: Bool? = nil, currentTime: Double? = nil,
        items: [QueueItem]? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.mediaSessionId = mediaSessionId
        self.jump = jump
        self.currentItemId = currentItemId
        self.repeatMode = repeatMode
        self.shuffle = shuffle
        self.currentTime = currentTime
        self.items = items
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var mediaSessionId: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestId = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionId = try value.decodeInt(key.string)
            case "jump": jump = try value.decodeInt(key.string)
            case "currentItemId": currentItemId = try value.decodeInt(key.string)
            case "repeatMode": repeatMode = try value.decodeEnum(key.string)
            case "shuffle": shuffle = try value.decodeBool(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "items": items = try value.decodeModels(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestId = try requireKey(requestId, "requestId")
        self.mediaSessionId = try requireKey(mediaSessionId, "mediaSessionId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_UPDATE", requestID: requestId, capacity: 8)
        object.put("mediaSessionId", mediaSessionId)
        object.put("jump", jump)
        object.put("currentItemId", currentItemId)
        object.put("repeatMode", repeatMode)
        object.put("shuffle", shuffle)
        object.put("currentTime", currentTime)
        object.put("items", items)
        object.put("customData", customData)
        return .object(object)
    }
}
