/// A media-namespace QUEUE_LOAD request: replace the queue with `items`.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueLoadRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var mediaSessionID: Int?
    public var items: [QueueItem]
    /// Index in `items` to start with.
    public var startIndex: Int?
    public var currentTime: Double?
    public var repeatMode: RepeatMode?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, mediaSessionID: Int? = nil, items: [QueueItem], startIndex: Int? = nil,
        currentTime: Double? = nil, repeatMode: RepeatMode? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.items = items
        self.startIndex = startIndex
        self.currentTime = currentTime
        self.repeatMode = repeatMode
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var items: [QueueItem]?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            case "items": items = try value.decodeModels(key.string)
            case "startIndex": startIndex = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "repeatMode": repeatMode = try value.decodeEnum(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.items = try requireKey(items, "items")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_LOAD", requestID: requestID, capacity: 8)
        object.put("mediaSessionId", mediaSessionID)
        object.put("items", items)
        object.put("startIndex", startIndex)
        object.put("currentTime", currentTime)
        object.put("repeatMode", repeatMode)
        object.put("customData", customData)
        return .object(object)
    }
}
