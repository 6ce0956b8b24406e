/// A media-namespace QUEUE_INSERT request: add `items` to the queue (before `insertBefore`, or at the end).
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueInsertRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var mediaSessionID: Int
    public var items: [QueueItem]
    /// itemId to insert before; nil appends.
    public var insertBefore: Int?
    /// Index in `items` that becomes the current item.
    public var currentItemIndex: Int?
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, mediaSessionID: Int, items: [QueueItem], insertBefore: Int? = nil,
        currentItemIndex: Int? = nil, currentTime: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.items = items
        self.insertBefore = insertBefore
        self.currentItemIndex = currentItemIndex
        self.currentTime = currentTime
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var mediaSessionID: Int?
        var items: [QueueItem]?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            case "items": items = try value.decodeModels(key.string)
            case "insertBefore": insertBefore = try value.decodeInt(key.string)
            case "currentItemIndex": currentItemIndex = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.mediaSessionID = try requireKey(mediaSessionID, "mediaSessionId")
        self.items = try requireKey(items, "items")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_INSERT", requestID: requestID, capacity: 8)
        object.put("mediaSessionId", mediaSessionID)
        object.put("items", items)
        object.put("insertBefore", insertBefore)
        object.put("currentItemIndex", currentItemIndex)
        object.put("currentTime", currentTime)
        object.put("customData", customData)
        return .object(object)
    }
}
