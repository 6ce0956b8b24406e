import CastCore
import CastProtocol

/// Answers a message on one of an app's own namespaces, per ``CustomNamespaceBehaviour``.
enum CustomNamespaceResponder {
    /// The reply to the sender, or nil (silent).
    static func respond(
        to payload: CastMessage.Payload, on namespace: CastNamespace, mode: CustomNamespaceBehaviour.Mode
    ) -> EndpointReply? {
        switch mode {
        case .silent:
            return nil
        case .echo:
            return EndpointReply(namespace, payload: payload, to: .requester)
        case .scripted(let table):
            var incoming: JSONObject?
            if case .string(let text) = payload, let object = (try? JSONValue.parse(text))?.object { incoming = object }
            let requestID = incoming?["requestId"]
            var answer: JSONValue = ["type": "ERROR", "reason": "NOT_SUPPORTED"]
            if let type = incoming?["type"]?.string, let scripted = table[type] { answer = scripted }
            if let requestID, !requestID.isNull, case .object(var object) = answer {
                object.set("requestId", requestID)
                answer = .object(object)
            }
            return EndpointReply(namespace, answer, to: .requester)
        case .dashCast, .homeAssistant:
            return nil  // the device answers these with the app's state (ReceiverDevice+WebApps)
        }
    }
}
