import CastCore
import CastProtocol
import CastReceiverSim
import NIOCore
import CastLogging

/// `castline sim --replay`: requests the capture holds are answered as the recorded device
/// answered them (``ReplayScript``), each message after its recorded delay; the others go to the
/// standard model, noted `unrecorded` in the frame log.
extension Optional {
    /// The value, leaving nil behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}

extension SimulatedDevice {
    /// True when the recording answered `message` (the model does not see it).
    func answeredFromReplay(_ message: CastMessage, from id: SenderConnectionID) -> Bool {
        guard let script = settings.replay else { return false }
        // A connection the replay dropped (a recorded drop) is continued by the next one, as the
        // recorded sender's reconnect continued its session.
        var cursor = replayCursors[id] ?? droppedReplayCursor.take() ?? ReplayCursor()
        defer { replayCursors[id] = cursor }
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
        frameLogEvent("replayed", connection: id.rawValue, peer: peer, fields: [
            "namespace": .string(message.namespace.rawValue), "messages": .int(Int64(outputs.count)),
        ])
        for output in outputs {
            let send: @Sendable () -> Void = { [weak self] in
                guard let self, let connection = self.connections[id] else { return }
                if output.closesConnection {
                    self.droppedReplayCursor = self.replayCursors[id]
                    self.frameLogEvent("replayedDrop", connection: id.rawValue, peer: connection.peerDescription, fields: [:])
                    _ = connection.close(reason: "replay: the recorded connection dropped here")
                } else {
                    connection.send(output.message)
                }
            }
            if output.delay <= 0 { send() } else { loop.scheduleTask(in: .seconds(clamping: output.delay)) { send() } }
        }
        return true
    }
}
