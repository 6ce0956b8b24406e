import CastCore
import CastLogging
import Dispatch
import Synchronization

/// Requests to the helper that wait for their answer: media-format probes and log-sink opens.
extension IsolatedPlugin {
    /// Sends `name` with `fields` plus a call id and waits at most `bound` for the `answer` with
    /// that id. Nil when the helper is down, ended meanwhile, or did not answer in time; then
    /// `hung` says whether it is still up (and so stuck).
    func call(_ name: String, _ fields: JSONObject) -> (answer: JSONValue?, hung: ChildProcess?) {
        let waiter = FrameWaiter()
        let (child, id) = state.withLock { s -> (ChildProcess?, Int64) in
            let id = s.nextCall
            s.nextCall += 1
            if s.child != nil { s.calls[id] = waiter }
            return (s.child, id)
        }
        guard let child else { return (nil, nil) }
        var frame = fields
        frame.set("call", .int(id))
        guard child.socket.send([name: .object(frame)], deadline: MonotonicDeadline(after: bound)) else {
            state.withLock { _ = $0.calls.removeValue(forKey: id) }
            return (nil, nil)
        }
        if let answer = waiter.wait(bound: bound) { return (answer, nil) }
        let stillUp = state.withLock { s -> Bool in
            s.calls[id] = nil
            return s.child === child
        }
        return (nil, stillUp ? child : nil)
    }

    /// Kills a helper that did not answer a call within the bound: it is restarted like a
    /// crashed one (the error record says why).
    func killHung(_ child: ChildProcess, during what: String) {
        let killed = state.withLock { s -> Bool in
            guard s.child === child, !s.hung else { return false }
            s.hung = true
            return true
        }
        guard killed else { return }
        log.error("plugin \(pluginID)'s helper process (pid \(child.pid)) did not answer \(what) within \(PluginScan.seconds(bound)) (plugins.call_timeout); killing it",
                  ["helperPid": .int(Int(child.pid)), "problem": "timed_out", "bound": .double(bound), "call": .string(what)])
        child.kill()
    }

    /// A media-format feature's probe, run in the helper: the report's JSON bytes, or why not.
    /// A helper that crashes during it is restarted; one that does not answer within the bound is
    /// killed and restarted (a probe stuck in a parser, say); the next probe goes to the new one.
    func probe(feature: String, url: String?, contentType: String?, body: [UInt8]?) -> Result<[UInt8], MediaFormatProbeError> {
        var fields: JSONObject = ["feature": .string(feature)]
        if let url { fields.set("url", .string(url)) }
        if let contentType { fields.set("content_type", .string(contentType)) }
        if let body { fields.set("body", .string(Base64.encode(body))) }
        let (answer, hung) = call("probe", fields)
        guard let answer else {
            if let hung {
                killHung(hung, during: "a probe")
                return .failure(MediaFormatProbeError("its probe did not return within \(PluginScan.seconds(bound)) (plugins.call_timeout) in its helper process, which was killed and is being restarted"))
            }
            return .failure(MediaFormatProbeError("its helper process is down (it crashed and is being restarted)"))
        }
        guard answer["status"]?.int == Int64(HostServices.ok), let json = answer["json"]?.string else {
            return .failure(MediaFormatProbeError(answer["error"]?.string ?? "status \(answer["status"]?.int ?? -1)"))
        }
        return .success(Array(json.utf8))
    }

    // MARK: Log sinks

    /// Opens `sink` in the helper (again after a restart, with the same instance); the error
    /// text when it could not, nil when it did.
    func openSink(_ sink: IsolatedLogSink) -> String? {
        state.withLock { s in
            if sink.instance == 0 {
                sink.instance = s.nextInstance
                s.nextInstance += 1
            }
            s.sinks[sink.instance] = sink
        }
        let (answer, hung) = call("openSink", ["instance": .int(Int64(sink.instance)), "feature": .string(sink.featureID),
                                               "options": .string(sink.options)])
        guard let answer else {
            if let hung { killHung(hung, during: "a log sink's open") }
            return "its helper process did not open it within \(PluginScan.seconds(bound)) (plugins.call_timeout)"
        }
        guard answer["status"]?.int == Int64(HostServices.ok) else {
            return answer["error"]?.string ?? "status \(answer["status"]?.int ?? -1)"
        }
        return nil
    }

    /// Sends a frame the helper answers nothing to (records, flush, close); false when it is down
    /// or did not take it within the bound.
    func sendRaw(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let child = state.withLock({ $0.child }) else { return false }
        return child.socket.send(json: bytes, deadline: MonotonicDeadline(after: bound))
    }

    func forget(_ sink: IsolatedLogSink) {
        state.withLock { _ = $0.sinks.removeValue(forKey: sink.instance) }
    }
}

/// One answer awaited by a thread (``IsolatedPlugin/call(_:_:)``), given by the reader thread or
/// by the helper's end (nil).
final class FrameWaiter: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let value = Mutex<JSONValue?>(nil)

    func resume(_ answer: JSONValue?) {
        value.withLock { $0 = answer }
        done.signal()
    }

    func wait(bound: Double) -> JSONValue? {
        guard done.wait(timeout: .now() + .nanoseconds(Int(max(bound, 0) * 1e9))) == .success else { return nil }
        return value.withLock { $0 }
    }
}
