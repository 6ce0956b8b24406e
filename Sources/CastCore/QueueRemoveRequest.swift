/// A media-namespace QUEUE_REMOVE request: remove the items with `itemIds`.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueRemoveRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var mediaSessionId: Int
    public var itemIds: [Int]
    public var currentItemId: Int?
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, mediaSessionId: Int, itemIds: [Int], currentItemId: Int? = nil,
        currentTime: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.mediaSessionId = mediaSessionId
        self.itemIds = itemIds
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
        var object = JSONObject.message("QUEUE_REMOVE", requestID: requestId, capacity: 7)
        object.put("mediaSessionId", mediaSessionId)
        object.put("itemIds", itemIds)
        object.put("currentItemId", currentItemId)
        object.put("currentTime", currentTime)
        object.put("customData", customData)
        return .object(object)
    }
}
