/// One running app in RECEIVER_STATUS `status.applications[]`.
///
/// `appId`, `sessionId` and `transportId` are required; a missing `displayName` decodes as `""`.
/// Talk to the app by CONNECTing to ``transport`` (in current firmware `transportId == sessionId`).
public struct ApplicationInfo: CastPayloadModel, Hashable {
    public var appId: String
    /// `WEB`, `ANDROID_TV`, …
    public var appType: String?
    public var displayName: String
    public var iconUrl: String?
    /// `true` for the ambient/backdrop app.
    public var isIdleScreen: Bool?
    public var launchedFromCloud: Bool?
    /// The app's namespaces (`namespaces: [{"name": urn}]` on the wire).
    public var namespaces: [CastNamespace]
    /// Newer firmware.
    public var senderConnected: Bool?
    public var sessionId: String
    public var statusText: String?
    public var transportId: String
    public var universalAppId: String?

    public init(
        appId: String, appType: String? = nil, displayName: String, iconUrl: String? = nil,
        isIdleScreen: Bool? = nil, launchedFromCloud: Bool? = nil, namespaces: [CastNamespace] = [],
        senderConnected: Bool? = nil, sessionId: String, statusText: String? = nil, transportId: String,
        universalAppId: String? = nil
    ) {
        self.appId = appId
        self.appType = appType
        self.displayName = displayName
        self.iconUrl = iconUrl
        self.isIdleScreen = isIdleScreen
        self.launchedFromCloud = launchedFromCloud
        self.namespaces = namespaces
        self.senderConnected = senderConnected
        self.sessionId = sessionId
        self.statusText = statusText
        self.transportId = transportId
        self.universalAppId = universalAppId
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var appId: String?
        var sessionId: String?
        var transportId: String?
        self.init(appId: "", displayName: "", sessionId: "", transportId: "")
        for (key, value) in try json.modelObject() {
            switch key {
            case "appId": appId = try value.decodeString(key.string)
            case "appType": appType = try value.decodeString(key.string)
            case "displayName": displayName = try value.decodeString(key.string) ?? ""
            case "iconUrl": iconUrl = try value.decodeString(key.string)
            case "isIdleScreen": isIdleScreen = try value.decodeBool(key.string)
            case "launchedFromCloud": launchedFromCloud = try value.decodeBool(key.string)
            case "namespaces": namespaces = try value.decodeArray(key.string, Self.decodeNamespace) ?? []
            case "senderConnected": senderConnected = try value.decodeBool(key.string)
            case "sessionId": sessionId = try value.decodeString(key.string)
            case "statusText": statusText = try value.decodeString(key.string)
            case "transportId": transportId = try value.decodeString(key.string)
            case "universalAppId": universalAppId = try value.decodeString(key.string)
            default: break
            }
        }
        self.appId = try requireKey(appId, "appId")
        self.sessionId = try requireKey(sessionId, "sessionId")
        self.transportId = try requireKey(transportId, "transportId")
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
        object.put("appId", appId)
        object.put("appType", appType)
        object.put("displayName", displayName)
        object.put("iconUrl", iconUrl)
        object.put("isIdleScreen", isIdleScreen)
        object.put("launchedFromCloud", launchedFromCloud)
        object.put("namespaces", JSONValue.array(namespaces.map { ["name": .string($0.rawValue)] }))
        object.put("senderConnected", senderConnected)
        object.put("sessionId", sessionId)
        object.put("statusText", statusText)
        object.put("transportId", transportId)
        object.put("universalAppId", universalAppId)
        return .object(object)
    }

    /// The endpoint to CONNECT to and address app messages to.
    public var transport: EndpointID { EndpointID(rawValue: transportId) }

    /// Whether the app lists `namespace`.
    public func supports(_ namespace: CastNamespace) -> Bool { namespaces.contains(namespace) }
}
