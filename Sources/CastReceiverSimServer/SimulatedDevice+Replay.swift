import CastCore
import CastProtocol
import CastReceiverSim
import NIOCore
import CastLogging

/// `castline sim --replay`: requests the capture holds are answered as the recorded device
/// answered them (``ReplayScript``), each message after its recorded delay; the others go to the
/// standard model, noted `unrecorded` in the frame log.
extension SimulatedDevice {
    /// True when the recording answered `message` (the model does not see it).
    func answeredFromReplay(_ message: CastMessage, from id: SenderConnectionID) -> Bool {
        guard let script = settings.replay else { return false }
        var cursor = replayCursors[id] ?? ReplayCursor()
        let peer = connections[id]?.peerDescription
        guard let outputs = script.replies(to: message, now: MonotonicClock.seconds(), cursor: &cursor) else {
            if !ReplayScript.modelNamespaces.contains(message.namespace.rawValue) {
                let summary = CastFrameRecord.fields(of: message, direction: "in")
                frameLogEvent("unrecorded", connection: id.rawValue, peer: peer, fields: [
                    "namespace": .string(message.namespace.rawValue), "type": summary["type"] ?? .null,
                ])
                log.debug("unrecorded request: the standard model answers", ["namespace": .string(message.namespace.rawValue)])
            }
            return false
        }
        replayCursors[id] = cursor
        frameLogEvent("replayed", connection: id.rawValue, peer: peer, fields: [
            "namespace": .string(message.namespace.rawValue), "messages": .int(Int64(outputs.count)),
        ])
        for output in outputs {
            let send: @Sendable () -> Void = { [weak self] in
                guard let self else { return }
                self.connections[id]?.send(output.message)
            }
            if output.delay <= 0 { send() } else { loop.scheduleTask(in: .seconds(clamping: output.delay)) { send() } }
        }
        return true
    }
}
