/// A message of the `urn:x-cast:com.google.cast.receiver` namespace (platform receiver).
///
/// Requests (sender → `receiver-0`) require `requestId`; replies and broadcasts carry an optional
/// one (0 = unsolicited). The GET_APP_AVAILABILITY reply uses `responseType` instead of `type`
/// (openscreen, real devices); both spellings decode, and it is encoded with `responseType`.
/// Unknown `type`s decode as ``unknown(type:json:)`` and re-encode unchanged.
public enum ReceiverMessage: CastPayloadModel, Hashable {
    case launch(LaunchRequest)
    case stop(requestId: RequestID, sessionId: String?)
    case getStatus(requestId: RequestID)
    /// `appId: [String]` on the wire.
    case getAppAvailability(requestId: RequestID, appIds: [String])
    /// Device volume: send either `level` or `muted`.
    case setVolume(requestId: RequestID, volume: Volume)
    case receiverStatus(requestId: RequestID?, status: ReceiverStatus)
    case launchError(requestId: RequestID?, reason: ErrorReason?)
    case invalidRequest(requestId: RequestID?, reason: ErrorReason?)
    /// Reply to GET_APP_AVAILABILITY.
    case appAvailability(requestId: RequestID?, availability: [AppAvailabilityEntry])
    case unknown(type: String, json: JSONValue)

    public init(json: JSONValue) throws(CastPayloadError) {
        let object = try json.modelObject()
        let requestID = try object.member("requestId")?.decodeRequestID()
        guard let type = try object.member("type")?.decodeString("type") else {
            let responseType = JSONStringKey(try object.member("responseType")?.decodeString("responseType") ?? "")
            switch responseType {
            case "GET_APP_AVAILABILITY":
                self = .appAvailability(requestId: requestID, availability: try Self.decodeAvailability(object))
            default:
                self = .unknown(type: responseType.string, json: json)
            }
            return
        }
        switch JSONStringKey(type) {
        case "LAUNCH":
            self = .launch(try LaunchRequest(json: json))
        case "STOP":
            self = .stop(requestId: try requireKey(requestID, "requestId"),
                         sessionId: try object.member("sessionId")?.decodeString("sessionId"))
        case "GET_STATUS":
            self = .getStatus(requestId: try requireKey(requestID, "requestId"))
        case "GET_APP_AVAILABILITY" where object.member("availability") != nil && object.member("appId") == nil:
            self = .appAvailability(requestId: requestID, availability: try Self.decodeAvailability(object))
        case "GET_APP_AVAILABILITY":
            let appIds: [String]
            if case .string(let single)? = object.member("appId") {
                appIds = [single]
            } else {
                appIds = try requireKey(try object.member("appId")?.decodeStrings("appId"), "appId")
            }
            self = .getAppAvailability(requestId: try requireKey(requestID, "requestId"), appIds: appIds)
        case "SET_VOLUME":
            let volume: Volume? = try object.member("volume")?.decodeModel("volume")
            self = .setVolume(requestId: try requireKey(requestID, "requestId"), volume: try requireKey(volume, "volume"))
        case "RECEIVER_STATUS":
            let status: ReceiverStatus? = try object.member("status")?.decodeModel("status")
            self = .receiverStatus(requestId: requestID, status: status ?? ReceiverStatus())
        case "LAUNCH_ERROR":
            self = .launchError(requestId: requestID, reason: try object.member("reason")?.decodeEnum("reason"))
        case "INVALID_REQUEST":
            self = .invalidRequest(requestId: requestID, reason: try object.member("reason")?.decodeEnum("reason"))
        default:
            self = .unknown(type: type, json: json)
        }
    }

    static func decodeAvailability(_ object: JSONObjectMembers) throws(CastPayloadError) -> [AppAvailabilityEntry] {
        guard let value = object.member("availability"), !value.isNull else { return [] }
        var entries: [AppAvailabilityEntry] = []
        do throws(CastPayloadError) {
            for (key, answer) in try value.modelObject() {
                let appId = key.string
                guard let text = try answer.decodeString(appId) else { throw CastPayloadError.missingKey(appId) }
                entries.append(AppAvailabilityEntry(appId: appId, availability: AppAvailability(rawValue: text)))
            }
        } catch {
            throw error.prefixed(with: .key("availability"))
        }
        return entries
    }

    public var json: JSONValue {
        switch self {
        case .launch(let request):
            return request.json
        case .stop(let requestId, let sessionId):
            var object = JSONObject.message("STOP", requestID: requestId)
            object.put("sessionId", sessionId)
            return .object(object)
        case .getStatus(let requestId):
            return .object(.message("GET_STATUS", requestID: requestId))
        case .getAppAvailability(let requestId, let appIds):
            var object = JSONObject.message("GET_APP_AVAILABILITY", requestID: requestId)
            object.put("appId", appIds)
            return .object(object)
        case .setVolume(let requestId, let volume):
            var object = JSONObject.message("SET_VOLUME", requestID: requestId)
            object.put("volume", volume)
            return .object(object)
        case .receiverStatus(let requestId, let status):
            var object = JSONObject.message("RECEIVER_STATUS", requestID: requestId)
            object.put("status", status)
            return .object(object)
        case .launchError(let requestId, let reason):
            var object = JSONObject.message("LAUNCH_ERROR", requestID: requestId)
            object.put("reason", reason)
            return .object(object)
        case .invalidRequest(let requestId, let reason):
            var object = JSONObject.message("INVALID_REQUEST", requestID: requestId)
            object.put("reason", reason)
            return .object(object)
        case .appAvailability(let requestId, let availability):
            var object = JSONObject()
            object.put("responseType", "GET_APP_AVAILABILITY")
            object.put("requestId", requestId)
            var answers = JSONObject()
            for entry in availability { answers.append(key: entry.appId, value: .string(entry.availability.rawValue)) }
            object.put("availability", JSONValue.object(answers))
            return .object(object)
        case .unknown(_, let json):
            return json
        }
    }

    /// The wire `type` (`responseType` for the availability reply).
    public var typeName: String {
        switch self {
        case .launch: return "LAUNCH"
        case .stop: return "STOP"
        case .getStatus: return "GET_STATUS"
        case .getAppAvailability, .appAvailability: return "GET_APP_AVAILABILITY"
        case .setVolume: return "SET_VOLUME"
        case .receiverStatus: return "RECEIVER_STATUS"
        case .launchError: return "LAUNCH_ERROR"
        case .invalidRequest: return "INVALID_REQUEST"
        case .unknown(let type, _): return type
        }
    }

    /// The `requestId`; nil when absent.
    public var requestID: RequestID? {
        switch self {
        case .launch(let request): return request.requestId
        case .stop(let id, _), .getStatus(let id), .getAppAvailability(let id, _), .setVolume(let id, _): return id
        case .receiverStatus(let id, _), .launchError(let id, _), .invalidRequest(let id, _), .appAvailability(let id, _):
            return id
        case .unknown(_, let json): return json.object?.embeddedRequestID
        }
    }
}
