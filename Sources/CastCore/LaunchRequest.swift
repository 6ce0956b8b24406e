/// A receiver-namespace LAUNCH request: start an app on the device.
///
/// `json` is the complete message including `type` and `requestId`.
public struct LaunchRequest: CastPayloadModel, Hashable {
    public var requestId: RequestID
    public var appId: String
    /// BCP 47 language tag for the app UI.
    public var language: String?
    /// e.g. `["WEB", "ANDROID_TV"]`.
    public var supportedAppTypes: [String]?
    /// App launch parameters, as sent.
    public var appParams: JSONValue?

    public init(
        requestId: RequestID, appId: String, language: String? = nil, supportedAppTypes: [String]? = nil,
        appParams: JSONValue? = nil
    ) {
        self.requestId = requestId
        self.appId = appId
        self.language = language
        self.supportedAppTypes = supportedAppTypes
        self.appParams = appParams
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestId: RequestID?
        var appId: String?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestId = try value.decodeRequestID()
            case "appId": appId = try value.decodeString(key.string)
            case "language": language = try value.decodeString(key.string)
            case "supportedAppTypes": supportedAppTypes = try value.decodeStrings(key.string)
            case "appParams": appParams = value.decodeAny()
            default: break
            }
        }
        self.requestId = try requireKey(requestId, "requestId")
        self.appId = try requireKey(appId, "appId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("LAUNCH", requestID: requestId, capacity: 6)
        object.put("appId", appId)
        object.put("language", language)
        object.put("supportedAppTypes", supportedAppTypes)
        object.put("appParams", appParams)
        return .object(object)
    }
}
