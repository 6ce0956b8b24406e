/// One running app in RECEIVER_STATUS `status.applications[]`.
///
/// `appId`, `sessionId` and `transportId` are required; a missing `displayName` decodes as `""`.
/// Talk to the app by CONNECTing to ``transport`` (in current firmware `transportId == sessionId`).
public struct ApplicationInfo: CastPayloadModel, Hashable {
    public var appID: String
    /// `WEB`, `ANDROID_TV`, …
    public var appType: String?
    public var displayName: String
    public var iconURL: String?
    /// `true` for the ambient/backdrop app.
    public var isIdleScreen: Bool?
    public var launchedFromCloud: Bool?
    /// The app's namespaces (`namespaces: [{"name": urn}]` on the wire).
    public var namespaces: [CastNamespace]
    /// Newer firmware.
    public var senderConnected: Bool?
    public var sessionID: String
    public var statusText: String?
    public var transportID: String
    public var universalAppID: String?

    public init(
        appID: String, appType: String? = nil, displayName: String, iconURL: String? = nil,
        isIdleScreen: Bool? = nil, launchedFromCloud: Bool? = nil, namespaces: [CastNamespace] = [],
        senderConnected: Bool? = nil, sessionID: String, statusText: String? = nil, transportID: String,
        universalAppID: String? = nil
    ) {
        self.appID = appID
        self.appType = appType
        self.displayName = displayName
        self.iconURL = iconURL
        self.isIdleScreen = isIdleScreen
        self.launchedFromCloud = launchedFromCloud
        self.namespaces = namespaces
        self.senderConnected = senderConnected
        self.sessionID = sessionID
        self.statusText = statusText
        self.transportID = transportID
        self.universalAppID = universalAppID
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var appID: String?
        var sessionID: String?
        var transportID: String?
        self.init(appID: "", displayName: "", sessionID: "", transportID: "")
        for (key, value) in try json.modelObject() {
            switch key {
            case "appId": appID = try value.decodeString(key.string)
            case "appType": appType = try value.decodeString(key.string)
            case "displayName": displayName = try value.decodeString(key.string) ?? ""
            case "iconUrl": iconURL = try value.decodeString(key.string)
            case "isIdleScreen": isIdleScreen = try value.decodeBool(key.string)
            case "launchedFromCloud": launchedFromCloud = try value.decodeBool(key.string)
            case "namespaces": namespaces = try value.decodeArray(key.string, Self.decodeNamespace) ?? []
            case "senderConnected": senderConnected = try value.decodeBool(key.string)
            case "sessionId": sessionID = try value.decodeString(key.string)
            case "statusText": statusText = try value.decodeString(key.string)
            case "transportId": transportID = try value.decodeString(key.string)
            case "universalAppId": universalAppID = try value.decodeString(key.string)
            default: break
            }
        }
        self.appID = try requireKey(appID, "appId")
        self.sessionID = try requireKey(sessionID, "sessionId")
        self.transportID = try requireKey(transportID, "transportId")
    }

    /// `{"name": urn}`; a bare string is accepted too.
    static func decodeNamespace(_ value: JSONValue) throws(CastPayloadError) -> CastNamespace {
        if case .string(let name) = value { return CastNamespace(rawValue: name) }
        let object = try value.modelObject()
        guard let name = try object.member("name")?.decodeString("name") else { throw .missingKey("name") }
        return CastNamespace(rawValue: name)
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(12)
        object.put("appId", appID)
        object.put("appType", appType)
        object.put("displayName", displayName)
        object.put("iconUrl", iconURL)
        object.put("isIdleScreen", isIdleScreen)
        object.put("launchedFromCloud", launchedFromCloud)
        object.put("namespaces", JSONValue.array(namespaces.map { ["name": .string($0.rawValue)] }))
        object.put("senderConnected", senderConnected)
        object.put("sessionId", sessionID)
        object.put("statusText", statusText)
        object.put("transportId", transportID)
        object.put("universalAppId", universalAppID)
        return .object(object)
    }

    /// The endpoint to CONNECT to and address app messages to.
    public var transport: EndpointID { EndpointID(rawValue: transportID) }

    /// Whether the app lists `namespace`.
    public func supports(_ namespace: CastNamespace) -> Bool { namespaces.contains(namespace) }
}
