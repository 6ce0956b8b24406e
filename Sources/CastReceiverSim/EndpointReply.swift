import CastCore
import CastProtocol

/// A message an endpoint (the platform receiver or an app) wants sent, and to whom among the
/// senders virtually connected to it. The device turns it into ``DeviceOutput/send(_:to:)``s.
struct EndpointReply: Sendable {
    enum Audience: Sendable, Equatable {
        /// The sender of the request being handled (even without a virtual connection).
        case requester
        /// Every sender connected to the endpoint except the requester.
        case others
        /// Every sender connected to the endpoint.
        case everyone
        /// The sender of the LOAD whose media is being checked (``MediaPlayer/pendingCheck``).
        case loadRequester
    }

    var namespace: CastNamespace
    var payload: CastMessage.Payload
    var audience: Audience
    /// An error answer (counted in ``DeviceSnapshot/rejectedMessages``).
    var isRejection: Bool

    static let rejectionTypes: Set<String> = [
        "INVALID_REQUEST", "INVALID_PLAYER_STATE", "LAUNCH_ERROR", "LOAD_FAILED", "ERROR",
    ]

    init(_ namespace: CastNamespace, _ json: JSONValue, to audience: Audience) {
        self.namespace = namespace
        self.payload = .string(json.serialized())
        self.audience = audience
        self.isRejection = json["type"]?.string.map { Self.rejectionTypes.contains($0) } ?? false
    }

    init(_ namespace: CastNamespace, payload: CastMessage.Payload, to audience: Audience) {
        self.namespace = namespace
        self.payload = payload
        self.audience = audience
        self.isRejection = false
    }
}

/// A request's JSON after the checks every request namespace shares: an object with an
/// integer `requestId`.
enum RequestEnvelope {
    case valid(json: JSONValue, requestID: RequestID)
    /// Answer INVALID_REQUEST / INVALID_COMMAND with this requestId (0 when there was none).
    case invalid(requestID: RequestID, why: String)

    init(_ payload: CastMessage.Payload) {
        guard case .string(let text) = payload else {
            self = .invalid(requestID: .unsolicited, why: "binary payload")
            return
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(text)
        } catch {
            self = .invalid(requestID: .unsolicited, why: "\(error)")
            return
        }
        guard case .object(let object) = json else {
            self = .invalid(requestID: .unsolicited, why: "payload is \(json.kindDescription), not an object")
            return
        }
        guard let id = object["requestId"]?.int else {
            self = .invalid(requestID: .unsolicited, why: "missing or non-integer requestId")
            return
        }
        guard object["type"]?.string != nil else {
            self = .invalid(requestID: RequestID(rawValue: Int(truncatingIfNeeded: id)), why: "missing type")
            return
        }
        self = .valid(json: json, requestID: RequestID(rawValue: Int(truncatingIfNeeded: id)))
    }
}
