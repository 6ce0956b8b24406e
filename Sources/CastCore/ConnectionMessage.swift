/// A message of the `urn:x-cast:com.google.cast.tp.connection` namespace.
///
/// Connection messages carry no `requestId`. Unknown `type`s decode as ``unknown(type:json:)``
/// and re-encode unchanged.
public enum ConnectionMessage: CastPayloadModel, Hashable {
    /// Open a virtual connection (sender → endpoint).
    case connect(ConnectRequest)
    /// Close it; receivers may add `reasonCode` (openscreen close reasons).
    case close(reasonCode: Int?)
    /// Receiver's answer to CONNECT: every member except `type` (e.g. `protocolVersion`).
    case connected(JSONObject)
    case unknown(type: String, json: JSONValue)

    public init(json: JSONValue) throws(CastPayloadError) {
        let object = try json.modelObject()
        let type = JSONStringKey(try object.member("type")?.decodeString("type") ?? "")
        switch type {
        case "CONNECT": self = .connect(try ConnectRequest(json: json))
        case "CLOSE": self = .close(reasonCode: try object.member("reasonCode")?.decodeInt("reasonCode"))
        case "CONNECTED": self = .connected(object.jsonObject.removingType())
        default: self = .unknown(type: type.string, json: json)
        }
    }

    public var json: JSONValue {
        switch self {
        case .connect(let request):
            return request.json
        case .close(let reasonCode):
            var object = JSONObject.message("CLOSE")
            object.put("reasonCode", reasonCode)
            return .object(object)
        case .connected(let members):
            return members.withType("CONNECTED")
        case .unknown(_, let json):
            return json
        }
    }

    /// The wire `type` (`CONNECT`, `CLOSE`, `CONNECTED`, or the unknown type).
    public var typeName: String {
        switch self {
        case .connect: return "CONNECT"
        case .close: return "CLOSE"
        case .connected: return "CONNECTED"
        case .unknown(let type, _): return type
        }
    }

    /// Always nil: connection messages carry no `requestId`.
    public var requestID: RequestID? { nil }
}
