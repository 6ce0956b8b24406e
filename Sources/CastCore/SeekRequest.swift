/// A media-namespace SEEK request (absolute `currentTime` or `relativeTime`, in seconds).
///
/// `json` is the complete message including `type` and `requestId`.
public struct SeekRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var mediaSessionId: Int
    public var currentTime: Double?
    public var relativeTime: Double?
    public var resumeState: ResumeState?
    public var customData: JSONValue?

    public init(
        requestId: RequestID, mediaSessionId: Int, currentTime: Double? = nil, relativeTime: Double? = nil,
        resumeState: ResumeState? = nil, customData: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.mediaSessionId = mediaSessionId
        self.currentTime = currentTime
        self.relativeTime = relativeTime
        self.resumeState = resumeState
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var mediaSessionId: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestId = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionId = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "relativeTime": relativeTime = try value.decodeDouble(key.string)
            case "resumeState": resumeState = try value.decodeEnum(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestId = try requireKey(requestId, "requestId")
        self.mediaSessionId = try requireKey(mediaSessionId, "mediaSessionId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("SEEK", requestID: requestId, capacity: 7)
        object.put("mediaSessionId", mediaSessionId)
        object.put("currentTime", currentTime)
        object.put("relativeTime", relativeTime)
        object.put("resumeState", resumeState)
        object.put("customData", customData)
        return .object(object)
    }
}
