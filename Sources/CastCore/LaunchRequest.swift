/// A receiver-namespace LAUNCH request: start an app on the device.
///
/// `json` is the complete message including `type` and `requestId`.
public struct LaunchRequest: CastPayloadModel, Hashable {
    public var requestID: RequestID
    public var appID: String
    /// BCP 47 language tag for the app UI.
    public var language: String?
    /// e.g. `["WEB", "ANDROID_TV"]`.
    public var supportedAppTypes: [String]?
    /// App launch parameters, as sent.
    public var appParams: JSONValue?

    public init(
        requestID: RequestID, appID: String, language: String? = nil, supportedAppTypes: [String]? = nil,
        appParams: JSONValue? = nil
    ) {
        self.requestID = requestID
        self.appID = appID
        self.language = language
        self.supportedAppTypes = supportedAppTypes
        self.appParams = appParams
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var requestID: RequestID?
        var appID: String?
        for (key, value) in try json.modelObject() {
            switch key {
            case "requestId": requestID = try value.decodeRequestID()
            case "appId": appID = try value.decodeString(key.string)
            case "language": language = try value.decodeString(key.string)
            case "supportedAppTypes": supportedAppTypes = try value.decodeStrings(key.string)
            case "appParams": appParams = value.decodeAny()
            default: break
            }
        }
        self.requestID = try requireKey(requestID, "requestId")
        self.appID = try requireKey(appID, "appId")
    }

    public var json: JSONValue {
        var object = JSONObject.message("LAUNCH", requestID: requestID, capacity: 6)
        object.put("appId", appID)
        object.put("language", language)
        object.put("supportedAppTypes", supportedAppTypes)
        object.put("appParams", appParams)
        return .object(object)
    }
}
