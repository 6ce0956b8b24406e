/// A media-namespace SEEK request (absolute `currentTime` or `relativeTime`, in seconds).
///
/// `json` is the complete message including `type` and `requestId`.
public struct SeekRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var mediaSessionID: Int
    public var currentTime: Double?
    public var relativeTime: Double?
    public var resumeState: ResumeState?
    public var customData: JSONValue?

    public init(
        requestID: RequestID, mediaSessionID: Int, currentTime: Double? = nil, relativeTime: Double? = nil,
        resumeState: ResumeState? = nil, customData: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.mediaSessionID = mediaSessionID
        self.currentTime = currentTime
        self.relativeTime = relativeTime
        self.resumeState = resumeState
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var mediaSessionID: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "mediaSessionId": mediaSessionID = try value.decodeInt(key.string)
            case "currentTime": currentTime = try value.decodeDouble(key.string)
            case "relativeTime": relativeTime = try value.decodeDouble(key.string)
            case "resumeState": resumeState = try value.decodeEnum(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.mediaSessionID = try requireKey(mediaSessionID, "mediaSessionId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("SEEK", requestID: requestID, capacity: 7)
        object.put("mediaSessionId", mediaSessionID)
        object.put("currentTime", currentTime)
        object.put("relativeTime", relativeTime)
        object.put("resumeState", resumeState)
        object.put("customData", customData)
        return .object(object)
    }
}
