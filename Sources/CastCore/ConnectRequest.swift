/// A CONNECT message (namespace `tp.connection`): opens a virtual connection to an endpoint.
///
/// Every member is optional; `{"type":"CONNECT"}` is a valid request. `json` includes `type`.
public struct ConnectRequest: CastPayloadModel, Hashable {
    public var connType: ConnectionType?
    /// Usually `{}`.
    public var origin: JSONValue?
    public var userAgent: String?
    /// `{sdkType, version, browserVersion, platform, systemVersion, connectionType}` as sent.
    public var senderInfo: JSONValue?
    public var protocolVersion: Int?
    public var protocolVersionList: [Int]?

    public init(
        connType: ConnectionType? = nil, origin: JSONValue? = nil, userAgent: String? = nil,
        senderInfo: JSONValue? = nil, protocolVersion: Int? = nil, protocolVersionList: [Int]? = nil
    ) {
        self.connType = connType
        self.origin = origin
        self.userAgent = userAgent
        self.senderInfo = senderInfo
        self.protocolVersion = protocolVersion
        self.protocolVersionList = protocolVersionList
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        self.init()
        for (key, value) in try json.modelObject() {
            switch key {
            case "connType": connType = try value.decodeIntEnum(key.string)
            case "origin": origin = value.decodeAny()
            case "userAgent": userAgent = try value.decodeString(key.string)
            case "senderInfo": senderInfo = value.decodeAny()
            case "protocolVersion": protocolVersion = try value.decodeInt(key.string)
            case "protocolVersionList": protocolVersionList = try value.decodeInts(key.string)
            default: break
            }
        }
    }

    public var json: JSONValue {
        var object = JSONObject.message("CONNECT", capacity: 7)
        object.put("connType", connType)
        object.put("origin", origin)
        object.put("userAgent", userAgent)
        object.put("senderInfo", senderInfo)
        object.put("protocolVersion", protocolVersion)
        object.put("protocolVersionList", protocolVersionList)
        return .object(object)
    }
}
