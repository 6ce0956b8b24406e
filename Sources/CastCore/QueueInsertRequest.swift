/// A media-namespace QUEUE_INSERT request: add `items` to the queue (before `insertBefore`, or at the end).
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueInsertRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var mediaSessionId: Int
    public var items: [QueueItem]
    /// itemId to insert before; nil appends.
    public var insertBefore: Int?
    /// Index in `items` that becomes the current item.
    public var currentItemIndex: Int?
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, mediaSessionId: Int, items: [QueueItem], insertBefore: Int? = nil,
        currentItemIndex: Int? = nil, currentTime: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.mediaSessionId = mediaSessionId
        self.items = items
        self.insertBefore = insertBefore
        self.currentItemIndex = currentItemIndex
        self.currentTime = currentTime
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var mediaSessionId: Int?
        var items: [QueueItem]?
        for (key, value) in try json.modelObject() {
            switch (key.utf8.count, key) {
            case (9, "requestId"): requestId = try value.decodeRequestID()
            case (14, "mediaSessionId"): mediaSessionId = try value.decodeInt(key)
            case (5, "items"): items = try value.decodeModels(key)
            case (12, "insertBefore"): insertBefore = try value.decodeInt(key)
            case (16, "currentItemIndex"): currentItemIndex = try value.decodeInt(key)
            case (11, "currentTime"): currentTime = try value.decodeDouble(key)
            case (10, "customData"): customData = value.decodeAny()
            default: break
            }
        }
        self.requestId = try requireKey(requestId, "requestId")
        self.mediaSessionId = try requireKey(mediaSessionId, "mediaSessionId")
        self.items = try requireKey(items, "items")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_INSERT", requestID: requestId, capacity: 8)
        object.put("mediaSessionId", mediaSessionId)
        object.put("items", items)
        object.put("insertBefore", insertBefore)
        object.put("currentItemIndex", currentItemIndex)
        object.put("currentTime", currentTime)
        object.put("customData", customData)
        return .object(object)
    }
}
