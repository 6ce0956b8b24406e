/// A media-namespace QUEUE_REORDER request: move `itemIds` (in that order) before `insertBefore`,
/// or to the end.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueReorderRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var mediaSessionId: Int
    public var itemIds: [Int]
    public var insertBefore: Int?
    public var currentItemId: Int?
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, mediaSessionId: Int, itemIds: [Int], insertBefore: Int? = nil,
        currentItemId: Int? = nil, currentTime: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.mediaSessionId = mediaSessionId
        self.itemIds = itemIds
        self.insertBefore = insertBefore
        self.currentItemId = currentItemId
        self.currentTime = currentTime
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var mediaSessionId: Int?
        var itemIds: [Int]?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestId = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionId = try value.decodeInt(key.string)
            case "itemIds": itemIds = try value.decodeInts(key.string)
            case "insertBefore": insertBefore = try value.decodeInt(key.string)
            case "currentItemId": currentItemId = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestId = try requireKey(requestId, "requestId")
        self.mediaSessionId = try requireKey(mediaSessionId, "mediaSessionId")
        self.itemIds = try requireKey(itemIds, "itemIds")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_REORDER", requestID: requestId, capacity: 8)
        object.put("mediaSessionId", mediaSessionId)
        object.put("itemIds", itemIds)
        object.put("insertBefore", insertBefore)
        object.put("currentItemId", currentItemId)
        object.put("currentTime", currentTime)
        object.put("customData", customData)
        return .object(object)
    }
}
