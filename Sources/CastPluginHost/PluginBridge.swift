internal import CCastPluginABI
import CastCore
import CastLogging
import Dispatch
import Synchronization

/// What a bridge plugin reaches in the daemon: the control API's requests (answered with the
/// HTTP API's status and JSON) and the hub's event stream. The daemon's executable provides it
/// over its one control plane; tests provide their own.
package struct BridgeServices: Sendable {
    /// One API request (`{"method", "path", "body"}`) → the HTTP status and the JSON body.
    package var request: @Sendable (_ request: JSONValue) async -> (status: Int, body: JSONValue)
    /// The hub's events of `kinds` (every kind when nil) from now on; a problem text for an unknown kind.
    package var subscribe: @Sendable (_ kinds: [String]?) -> Result<BridgeEventFeed, PluginCommandError>

    package init(request: @escaping @Sendable (_ request: JSONValue) async -> (status: Int, body: JSONValue),
                subscribe: @escaping @Sendable (_ kinds: [String]?) -> Result<BridgeEventFeed, PluginCommandError>) {
        self.request = request
        self.subscribe = subscribe
    }
}

/// A subscription to the hub's events: iterate ``events``; ``cancel`` ends it.
package struct BridgeEventFeed: Sendable {
    package let events: AsyncStream<JSONValue>
    package let cancel: @Sendable () -> Void

    package init(events: AsyncStream<JSONValue>, cancel: @escaping @Sendable () -> Void) {
        self.events = events
        self.cancel = cancel
    }
}

/// One running bridge feature (ABI 1.1): its `start` called once, its requests carried to
/// ``BridgeServices/request`` and answered through `on_reply`, its subscribed events handed to
/// `on_event`. Every call into the plugin runs on the instance's queue under the call bound
/// (`plugins.call_timeout`): an overrun is one error record (class `PluginBridge`, `problem:
/// timed_out`), the plugin is disabled and the bridge is never called again. Events queued for a
/// plugin that falls behind are capped (``maxQueuedEvents``): the rest are dropped and the next
/// delivered event carries `"lost": N`.
package final class PluginBridge: Sendable {
    package static let maxQueuedEvents = 4_096

    package let feature: PluginFeature
    private let calls: BridgeCalls
    private let host: PluginHost
    private let services: BridgeServices
    private let watch: PluginCallWatch
    private let log: Logger
    private let state = Mutex(State())

    private struct State {
        var context: PluginHostContext?
        var instance: InstancePointer?
        var feed: BridgeEventFeed?
        var pump: Task<Void, Never>?
        var requests: [UInt64: Task<Void, Never>] = [:]
        var nextRequestTask: UInt64 = 0
        var queuedEvents = 0
        var lostEvents = 0
        var stopped = false
    }

    /// Function pointers into a never-unloaded image.
    struct BridgeCalls: @unchecked Sendable {
        let vtable: castline_bridge_vtable
        let userdata: PluginUserData
    }

    init(feature: PluginFeature, vtable: castline_bridge_vtable, host: PluginHost, services: BridgeServices) {
        self.feature = feature
        calls = BridgeCalls(vtable: vtable, userdata: feature.userdata)
        self.host = host
        self.services = services
        watch = PluginCallWatch(bound: host.callTimeout)
        log = Logger(class: "PluginBridge", system: host.logSystem).with(["plugin": .string(feature.pluginID), "feature": .string(feature.id)])
    }

    /// True once the bridge stopped or overran a bound.
    package var isStopped: Bool { state.withLock { $0.stopped } || watch.tripped != nil }

    /// Calls the plugin's `start`; the problem when it failed or did not return in time.
    func start() async -> PluginLoadError? {
        let callbacks = PluginHostContext.BridgeCallbacks(
            request: { [weak self] id, request in self?.request(id, request) ?? HostServices.failed },
            subscribe: { [weak self] kinds in self?.subscribe(kinds) ?? HostServices.failed })
        let context = PluginHostContext.register(pluginID: feature.pluginID, featureID: feature.id, role: .bridge(callbacks),
                                                 logSystem: host.logSystem)
        let feature = feature, host = host, log = log
        watch.arm { [weak self] overrun in
            let error = PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
                "disabled: bridge \(feature.id)'s \(overrun.call) did not return within \(PluginScan.seconds(overrun.bound)) (plugins.call_timeout)")
            log.error(error.description, ["call": .string(overrun.call), "bound": .double(overrun.bound), "elapsed": .double(overrun.elapsed),
                                          "problem": .string(error.kind.rawValue), "path": .string(error.path)])
            host.disable(pluginID: feature.pluginID, error)
            self?.cancelAll()
        }
        let config = host.config(for: feature.pluginID)
        let errorText = PluginErrorText()
        let outcome = Mutex<(Int32, InstancePointer)?>(nil)
        let calls = calls
        struct ErrorBox: @unchecked Sendable { let text: PluginErrorText }
        let box = ErrorBox(text: errorText)
        state.withLock { $0.context = context }
        let inTime = await watch.runBounded("start", on: context.queue) {
            var instance: UnsafeMutableRawPointer?
            let rc = config.withCString { calls.vtable.start!(calls.userdata.pointer, HostServices.table, context.pointer, $0, &instance, box.text.buffer) }
            outcome.withLock { $0 = (rc, InstancePointer(pointer: instance)) }
            // Set on the queue: a reply or event queued during start finds the instance.
            if rc == 0 { self.state.withLock { $0.instance = InstancePointer(pointer: instance) } }
        }
        guard inTime, let (rc, _) = outcome.withLock({ $0 }) else {
            context.unregister()
            return watch.tripped == nil
                ? PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID, "bridge \(feature.id) was not started")
                : PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
                                  "bridge \(feature.id)'s start did not return within \(PluginScan.seconds(watch.bound)) (plugins.call_timeout)")
        }
        guard rc == 0 else {
            context.unregister()
            let error = PluginLoadError(.initFailed, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
                                        "bridge \(feature.id) could not start (status \(rc)): \(errorText.text ?? "no reason given")")
            log.error(error.description, ["problem": .string(error.kind.rawValue)])
            return error
        }
        log.info("bridge \(feature.qualifiedName) started")
        return nil
    }

    /// Stops the bridge: no further reply or event reaches it, then its `stop` runs (bounded).
    package func stop() async {
        let (context, instance) = state.withLock { s -> (PluginHostContext?, InstancePointer?) in
            guard !s.stopped else { return (nil, nil) }
            s.stopped = true
            return (s.context, s.instance)
        }
        cancelAll()
        guard let context else { return }
        if let instance, watch.tripped == nil {
            let calls = calls
            _ = await watch.runBounded("stop", on: context.queue) { calls.vtable.stop!(instance.pointer) }
        }
        context.unregister()
    }

    private func cancelAll() {
        let (feed, pump, requests) = state.withLock { s -> (BridgeEventFeed?, Task<Void, Never>?, [Task<Void, Never>]) in
            defer {
                s.feed = nil
                s.pump = nil
                s.requests = [:]
            }
            return (s.feed, s.pump, Array(s.requests.values))
        }
        feed?.cancel()
        pump?.cancel()
        for task in requests { task.cancel() }
    }

    // MARK: From the plugin

    private func request(_ id: UInt64, _ request: JSONValue) -> Int32 {
        let services = services
        return state.withLock { s -> Int32 in
            guard !s.stopped, s.context != nil else { return HostServices.failed }
            guard s.requests.count < 1_024 else {
                log.warning("bridge request refused: 1024 requests are already pending", ["requestId": .int(Int(truncatingIfNeeded: id))])
                return HostServices.failed
            }
            s.nextRequestTask += 1
            let key = s.nextRequestTask
            s.requests[key] = Task { [weak self] in
                let (status, body) = await services.request(request)
                self?.reply(id, status: status, body: body, task: key)
            }
            return HostServices.ok
        }
    }

    private func reply(_ id: UInt64, status: Int, body: JSONValue, task: UInt64) {
        guard let context = state.withLock({ s -> PluginHostContext? in
            s.requests[task] = nil
            guard !s.stopped else { return nil }
            return s.context
        }) else { return }
        let text = body.serialized()
        let calls = calls, watch = watch
        context.queue.async { [weak self] in
            guard let self, !self.isStopped, let instance = self.state.withLock({ $0.instance }) else { return }
            watch.run("on_reply") {
                text.withCString { calls.vtable.on_reply!(instance.pointer, id, Int32(clamping: status), $0, text.utf8.count) }
            }
        }
    }

    private func subscribe(_ kinds: [String]?) -> Int32 {
        guard calls.vtable.on_event != nil else {
            log.error("bridge \(feature.qualifiedName) subscribed to events but has no on_event; refused")
            return HostServices.invalidArgument
        }
        let feed: BridgeEventFeed
        switch services.subscribe(kinds) {
        case .failure(let problem):
            log.error("bridge event subscription refused: \(problem)", ["kinds": .string(kinds?.joined(separator: ",") ?? "")])
            return HostServices.invalidArgument
        case .success(let f): feed = f
        }
        let old = state.withLock { s -> (BridgeEventFeed?, Task<Void, Never>?)? in
            guard !s.stopped else { return nil }
            defer {
                s.feed = feed
                s.pump = Task { [weak self] in
                    for await event in feed.events {
                        guard let self else { return }
                        self.deliver(event)
                    }
                }
            }
            return (s.feed, s.pump)
        }
        guard let old else {
            feed.cancel()
            return HostServices.failed
        }
        old.0?.cancel()
        old.1?.cancel()
        return HostServices.ok
    }

    private func deliver(_ event: JSONValue) {
        let target = state.withLock { s -> (PluginHostContext, Int)? in
            guard !s.stopped, let context = s.context else { return nil }
            guard s.queuedEvents < Self.maxQueuedEvents else {
                s.lostEvents += 1
                return nil
            }
            s.queuedEvents += 1
            defer { s.lostEvents = 0 }
            return (context, s.lostEvents)
        }
        guard let (context, lost) = target else { return }
        var event = event
        if lost > 0, case .object(var o) = event {
            o.set("lost", .int(Int64(lost)))
            event = .object(o)
        }
        let text = event.serialized()
        let calls = calls, watch = watch
        context.queue.async { [weak self] in
            guard let self else { return }
            let instance = self.state.withLock { s -> InstancePointer? in
                s.queuedEvents -= 1
                return s.instance
            }
            guard !self.isStopped, let instance else { return }
            watch.run("on_event") {
                text.withCString { calls.vtable.on_event!(instance.pointer, $0, text.utf8.count) }
            }
        }
    }
}

extension PluginHost {
    /// Starts every loaded bridge feature against `services`; the ones that started. A bridge
    /// that fails to start is one error record and left out; the daemon goes on.
    package func startBridges(_ services: BridgeServices) async -> [PluginBridge] {
        var started: [PluginBridge] = []
        for f in features(of: .bridge) {
            guard case .bridge(let v) = f.vtable else {
                // A bridge reaches the control plane in this process; a helper process has none.
                log.error("bridge \(f.qualifiedName) not started: bridges run in process only (remove \(f.pluginID) from plugins.isolated)",
                          ["plugin": .string(f.pluginID), "feature": .string(f.id), "problem": "not_allowed"])
                continue
            }
            let bridge = PluginBridge(feature: f, vtable: v, host: self, services: services)
            if let problem = await bridge.start() {
                log.error(problem.description, ["plugin": .string(f.pluginID), "feature": .string(f.id), "problem": .string(problem.kind.rawValue)])
            } else {
                started.append(bridge)
            }
        }
        return started
    }
}
