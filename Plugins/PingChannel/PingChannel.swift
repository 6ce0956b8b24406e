import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// PingChannel — a channel plugin in Swift with CastPluginKit: the model for Swift plugin authors.
///
/// Feature channel `example-ping` owns `urn:x-cast:org.castline.example.ping`.
/// command `{}` → sends `{"type":"PING","requestId":N}`; the app's `PONG` with the same
/// requestId → `{"pong": true, "request_id": N, "rtt_ms": 0.8, "reply": {…}}`; an `ERROR`
/// reply fails the command with its reason.
final class PingChannel: ChannelPlugin {
    static let namespaces = ["urn:x-cast:org.castline.example.ping"]
    private let host: PluginHostServices
    private var nextRequestID: Int64 = 1
    /// requestId → (command id, sent at ms). Touched only on the instance's queue.
    private var pending: [Int64: (command: UInt64, sentAt: Double)] = [:]

    init(host: PluginHostServices, config: String, session: String) throws(PluginError) {
        self.host = host
        let info = try JSONValue.parsePluginInput(session)
        host.log(.debug, class: "PingChannel", "ping channel open", fields: ["device": .string(info["device_id"]?.string ?? "")])
    }

    func command(id: UInt64, json: String) {
        let requestID = nextRequestID
        nextRequestID += 1
        let message: JSONValue = ["type": "PING", "requestId": .int(requestID)]
        let rc = host.send(namespace: Self.namespaces[0], payload: message.serialized())
        guard rc == 0 else {
            host.fail(command: id, reason: "the host refused to send PING (status \(rc))")
            return
        }
        pending[requestID] = (id, Self.nowMs())
        host.log(.debug, class: "PingChannel", "PING sent", fields: ["requestId": .int(requestID)])
    }

    func didReceive(namespace: String, source: String, payload: String) {
        guard let reply = try? JSONValue.parse(payload), let requestID = reply["requestId"]?.int,
              let waiting = pending.removeValue(forKey: requestID) else {
            host.log(.warning, class: "PingChannel", "reply without a pending requestId ignored", fields: ["payload": .string(String(payload.prefix(200)))])
            return
        }
        switch reply["type"]?.string {
        case "PONG":
            let result: JSONValue = [
                "pong": true, "request_id": .int(requestID),
                "rtt_ms": .double(((Self.nowMs() - waiting.sentAt) * 1000).rounded() / 1000), "reply": reply,
            ]
            host.complete(command: waiting.command, json: result.serialized())
        case "ERROR":
            host.fail(command: waiting.command, reason: "the app answered ERROR: \(reply["reason"]?.string ?? "no reason")")
        default:
            host.fail(command: waiting.command, reason: "unexpected reply type \(reply["type"]?.string ?? "none")")
        }
    }

    func close() {
        for (_, waiting) in pending { host.fail(command: waiting.command, reason: "channel closed") }
        pending = [:]
    }

    /// ABI 1.2: a stopped app never answers the PINGs it holds; they fail now, not at their timeouts.
    func appDidChange(_ event: ChannelAppEvent, info: String) {
        guard event == .stopped else {
            host.log(.info, class: "PingChannel", "\(event)", fields: ["event": .string(event.description)])
            return
        }
        let failed = pending.count
        for (_, waiting) in pending { host.fail(command: waiting.command, reason: "the app stopped before it answered") }
        pending = [:]
        host.log(.info, class: "PingChannel", "app stopped; pending pings failed", fields: ["event": .string(event.description), "failed": .int(Int64(failed))])
    }

    static func nowMs() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }
}

enum PingChannelPlugin: CastlinePlugin {
    static let id = "ping-channel"
    static let version = "1.0.0"
    static let summary = "example channel in Swift (CastPluginKit): PING/PONG on urn:x-cast:org.castline.example.ping"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.channel(PingChannel.self, id: "example-ping")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(PingChannelPlugin.self) }
