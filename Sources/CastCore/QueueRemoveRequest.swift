/// A media-namespace QUEUE_REMOVE request: remove the items with `itemIds`.
///
/// `json` is the complete message including `type` and `requestId`.
public struct QueueRemoveRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var mediaSessionID: Int
    public var itemIDs: [Int]
    public var currentItemID: Int?
    public var currentTime: Double?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, mediaSessionID: Int, itemIDs: [Int], currentItemID: Int? = nil,
        currentTime: Double? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.itemIDs = itemIDs
        self.currentItemID = currentItemID
        self.currentTime = currentTime
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var mediaSessionID: Int?
        var itemIDs: [Int]?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            case "itemIds": itemIDs = try value.decodeInts(key.string)
            case "currentItemId": currentItemID = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.mediaSessionID = try requireKey(mediaSessionID, "mediaSessionId")
        self.itemIDs = try requireKey(itemIDs, "itemIds")
    }

    public var json: JSONValue {
        var object = JSONObject.message("QUEUE_REMOVE", requestID: requestID, capacity: 7)
        object.put("mediaSessionId", mediaSessionID)
        object.put("itemIds", itemIDs)
        object.put("currentItemId", currentItemID)
        object.put("currentTime", currentTime)
        object.put("customData", customData)
        return .object(object)
    }
}
