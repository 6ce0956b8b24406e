/// A message of the `urn:x-cast:com.google.cast.tp.heartbeat` namespace: PING or PONG.
///
/// Either side may PING; the other answers PONG. No `requestId`.
public enum HeartbeatMessage: CastPayloadModel, Hashable {
    case ping
    case pong
    case unknown(type: String, json: JSONValue)

    public init(json: JSONValue) throws(CastPayloadError) {
        let object = try json.modelObject()
        let type = JSONStringKey(try object.member("type")?.decodeString("type") ?? "")
        switch type {
        case "PING": self = .ping
        case "PONG": self = .pong
        default: self = .unknown(type: type.string, json: json)
        }
    }

    public var json: JSONValue {
        switch self {
        case .ping: return ["type": "PING"]
        case .pong: return ["type": "PONG"]
        case .unknown(_, let json): return json
        }
    }

    /// The wire `type`.
    public var typeName: String {
        switch self {
        case .ping: return "PING"
        case .pong: return "PONG"
        case .unknown(let type, _): return type
        }
    }

    /// Always nil: heartbeat messages carry no `requestId`.
    public var requestID: RequestID? { nil }
}
