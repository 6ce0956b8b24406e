/// A message of the `urn:x-cast:com.google.cast.receiver` namespace (platform receiver).
///
/// Requests (sender → `receiver-0`) require `requestId`; replies and broadcasts carry an optional
/// one (0 = unsolicited). The GET_APP_AVAILABILITY reply uses `responseType` instead of `type`
/// (openscreen, real devices); both spellings decode, and it is encoded with `responseType`.
/// Unknown `type`s decode as ``unknown(type:json:)`` and re-encode unchanged.
public enum ReceiverMessage: CastPayloadModel, Hashable {
    case launch(LaunchRequest)
    case stop(requestID: RequestID, sessionID: String?)
    case getStatus(requestID: RequestID)
    /// `appId: [String]` on the wire.
    case getAppAvailability(requestID: RequestID, appIDs: [String])
    /// Device volume: send either `level` or `muted`.
    case setVolume(requestID: RequestID, volume: Volume)
    case receiverStatus(requestID: RequestID?, status: ReceiverStatus)
    case launchError(requestID: RequestID?, reason: ErrorReason?)
    case invalidRequest(requestID: RequestID?, reason: ErrorReason?)
    /// Reply to GET_APP_AVAILABILITY.
    case appAvailability(requestID: RequestID?, availability: [AppAvailabilityEntry])
    case unknown(type: String, json: JSONValue)

    public init(json: JSONValue) throws(CastPayloadError) {
        let object = try json.modelObject()
        let requestID = try object.member("requestId")?.decodeRequestID()
        guard let type = try object.member("type")?.decodeString("type") else {
            let responseType = JSONStringKey(try object.member("responseType")?.decodeString("responseType") ?? "")
            switch responseType {
            case "GET_APP_AVAILABILITY":
                self = .appAvailability(requestID: requestID, availability: try Self.decodeAvailability(object))
            default:
                self = .unknown(type: responseType.string, json: json)
            }
            return
        }
        switch JSONStringKey(type) {
        case "LAUNCH":
            self = .launch(try LaunchRequest(json: json))
        case "STOP":
            self = .stop(requestID: try requireKey(requestID, "requestId"),
                         sessionID: try object.member("sessionId")?.decodeString("sessionId"))
        case "GET_STATUS":
            self = .getStatus(requestID: try requireKey(requestID, "requestId"))
        case "GET_APP_AVAILABILITY" where object.member("availability") != nil && object.member("appId") == nil:
            self = .appAvailability(requestID: requestID, availability: try Self.decodeAvailability(object))
        case "GET_APP_AVAILABILITY":
            let appIDs: [String]
            if case .string(let single)? = object.member("appId") {
                appIDs = [single]
            } else {
                appIDs = try requireKey(try object.member("appId")?.decodeStrings("appId"), "appId")
            }
            self = .getAppAvailability(requestID: try requireKey(requestID, "requestId"), appIDs: appIDs)
        case "SET_VOLUME":
            let volume: Volume? = try object.member("volume")?.decodeModel("volume")
            self = .setVolume(requestID: try requireKey(requestID, "requestId"), volume: try requireKey(volume, "volume"))
        case "RECEIVER_STATUS":
            let status: ReceiverStatus? = try object.member("status")?.decodeModel("status")
            self = .receiverStatus(requestID: requestID, status: status ?? ReceiverStatus())
        case "LAUNCH_ERROR":
            self = .launchError(requestID: requestID, reason: try object.member("reason")?.decodeEnum("reason"))
        case "INVALID_REQUEST":
            self = .invalidRequest(requestID: requestID, reason: try object.member("reason")?.decodeEnum("reason"))
        default:
            self = .unknown(type: type, json: json)
        }
    }

    static func decodeAvailability(_ object: JSONObjectMembers) throws(CastPayloadError) -> [AppAvailabilityEntry] {
        guard let value = object.member("availability"), !value.isNull else { return [] }
        var entries: [AppAvailabilityEntry] = []
        do throws(CastPayloadError) {
            for (key, answer) in try value.modelObject() {
                let appID = key.string
                guard let text = try answer.decodeString(appID) else { throw CastPayloadError.missingKey(appID) }
                entries.append(AppAvailabilityEntry(appID: appID, availability: AppAvailability(rawValue: text)))
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
        case .stop(let requestID, let sessionID):
            var object = JSONObject.message("STOP", requestID: requestID)
            object.put("sessionId", sessionID)
            return .object(object)
        case .getStatus(let requestID):
            return .object(.message("GET_STATUS", requestID: requestID))
        case .getAppAvailability(let requestID, let appIDs):
            var object = JSONObject.message("GET_APP_AVAILABILITY", requestID: requestID)
            object.put("appId", appIDs)
            return .object(object)
        case .setVolume(let requestID, let volume):
            var object = JSONObject.message("SET_VOLUME", requestID: requestID)
            object.put("volume", volume)
            return .object(object)
        case .receiverStatus(let requestID, let status):
            var object = JSONObject.message("RECEIVER_STATUS", requestID: requestID)
            object.put("status", status)
            return .object(object)
        case .launchError(let requestID, let reason):
            var object = JSONObject.message("LAUNCH_ERROR", requestID: requestID)
            object.put("reason", reason)
            return .object(object)
        case .invalidRequest(let requestID, let reason):
            var object = JSONObject.message("INVALID_REQUEST", requestID: requestID)
            object.put("reason", reason)
            return .object(object)
        case .appAvailability(let requestID, let availability):
            var object = JSONObject()
            object.put("responseType", "GET_APP_AVAILABILITY")
            object.put("requestId", requestID)
            var answers = JSONObject()
            for entry in availability { answers.append(key: entry.appID, value: .string(entry.availability.rawValue)) }
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
        case .launch(let request): return request.requestID
        case .stop(let id, _), .getStatus(let id), .getAppAvailability(let id, _), .setVolume(let id, _): return id
        case .receiverStatus(let id, _), .launchError(let id, _), .invalidRequest(let id, _), .appAvailability(let id, _):
            return id
        case .unknown(_, let json): return json.object?.embeddedRequestID
        }
    }
}
