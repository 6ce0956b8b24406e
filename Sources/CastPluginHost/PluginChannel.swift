internal import CCastPluginABI
import CastCore
import CastLogging
import Synchronization

/// One instance of a plugin's channel feature on one session (a ``PluginChannelSession``): it
/// owns the feature's declared namespaces there, receives their messages, sends through the
/// host's checks, and answers ``command(_:timeout:)`` calls from the CLI or the API.
///
/// The namespaces are attached to the session before the plugin's `open` runs, so a message the
/// plugin sends from `open` reaches the app; what the app sends meanwhile (and what happens to
/// the app) is delivered once `open` has returned. The channel is the namespaces' handler on the
/// session (no stream, no task between): the app's messages go straight onto the plugin's queue,
/// in order. The plugin's sends are queued on the session's connection as `send_message` is
/// called (``PluginChannelSession/send(namespace:destination:payload:)``), so they go out in the
/// order it made them.
/// Every call into the plugin runs on the instance's serial queue, under a time bound
/// (``PluginHost/callTimeout``): a call that overruns it is named in an error record (class
/// `PluginChannel`, fields `plugin`, `feature`, `call`, `bound`, `problem: timed_out`), the plugin
/// is disabled (``PluginHost/problems``; no new channel of it opens) and the channel is closed
/// without waiting on the plugin: its namespaces are detached, its pending commands fail, and
/// the plugin is never called again except for its `close`, queued behind the call that hangs.
/// ``close()`` waits at most the bound for the plugin's `close`. Thread-safe.
package final class PluginChannel: Sendable {
    package let feature: PluginFeature
    private let context: PluginHostContext
    private let calls: ChannelCalls
    private let session: any PluginChannelSession
    private let pending = Mutex<(next: UInt64, waiting: [UInt64: CheckedContinuation<Result<JSONValue, PluginCommandError>, Never>], closed: Bool)>((1, [:], false))
    private let log: Logger
    private let watch: PluginCallWatch
    private let host: PluginHost
    /// The one teardown (by ``close()`` or after an overrun); later callers await the same.
    private let teardown = Mutex<Task<Void, Never>?>(nil)
    /// Who else hears the app's messages on the plugin's namespaces (`castline channel listen`).
    private let observers = Mutex<[@Sendable (_ namespace: String, _ source: String, _ payload: String) -> Void]>([])

    private init(feature: PluginFeature, context: PluginHostContext, calls: ChannelCalls,
                 session: any PluginChannelSession, log: Logger, watch: PluginCallWatch, host: PluginHost) {
        self.feature = feature
        self.context = context
        self.calls = calls
        self.session = session
        self.log = log
        self.watch = watch
        self.host = host
    }

    /// Where a plugin's `send_message` goes, decided when it is called: NULL or "" is the app
    /// the session has joined, `receiver-0` the receiver platform, the app's transportId that
    /// app; anything else is refused. Pure.
    package static func route(destination: String?, appTransportID: String?, sessionEnded: Bool) -> Result<Destination, SendRefusal> {
        if sessionEnded { return .failure(SendRefusal(status: HostServices.notConnected, reason: "the session has ended")) }
        switch destination {
        case nil, "":
            guard appTransportID != nil else {
                return .failure(SendRefusal(status: HostServices.notConnected, reason: "no app runs on the session (nothing to send to)"))
            }
            return .success(.app)
        case "receiver-0"?:
            return .success(.receiver)
        case let transport?:
            if transport == appTransportID { return .success(.app) }
            guard let appTransportID else {
                return .failure(SendRefusal(status: HostServices.notConnected, reason: "no app runs on the session (destination \(transport))"))
            }
            return .failure(SendRefusal(status: HostServices.invalidArgument, reason:
                "destination \(transport) is neither the app's transportId (\(appTransportID)) nor receiver-0"))
        }
    }

    /// Where a send goes: the app the session has joined, or the receiver platform (`receiver-0`).
    package enum Destination: Sendable, Equatable {
        case app
        case receiver
    }

    /// Why a send was refused: the ABI status it returns and the text logged.
    package struct SendRefusal: Error, Equatable {
        package let status: Int32
        package let reason: String
    }

    /// Opens the feature `id` on `session` and attaches its namespaces.
    package static func open(feature: PluginFeature, on session: any PluginChannelSession, host: PluginHost) async throws(PluginLoadError) -> PluginChannel {
        let vtable: PluginVTableBox?, isolated: IsolatedPlugin?
        switch feature.vtable {
        case .channel(let v): (vtable, isolated) = (PluginVTableBox(channel: v), nil)
        case .isolated(let plugin): (vtable, isolated) = (nil, plugin)
        default: throw PluginLoadError(.undeclared, path: "", pluginID: feature.pluginID, "feature \(feature.id) is not a channel")
        }
        if let problem = host.runtimeProblem(.channel, id: feature.id) { throw problem }
        let deviceID = await session.deviceID
        // Every record of the channel names its device and (first) namespace: `logs query
        // --device` and `logs stats` find a plugin's failures where they happened.
        let log = Logger(class: "PluginChannel", system: host.logSystem).with([
            "plugin": .string(feature.pluginID), "feature": .string(feature.id), "device": .string(deviceID),
            "namespace": .string(feature.declarations.first ?? ""),
        ])
        let holder = ChannelHolder()
        // The plugin's sends go to the session as they are made (its callback is the session's
        // `send`); refusals and failed writes come back here to be reported.
        let callbacks = PluginHostContext.ChannelCallbacks(
            send: session.send(namespace:destination:payload:),
            complete: { id, result in holder.value?.finish(id, result) ?? false })
        let endpoint = PluginChannelEndpoint(
            deliver: holder.deliver(namespace:source:text:),
            appEvent: holder.appEvent,
            refused: { namespace, refusal in
                // A plugin that keeps sending into nothing is one warning a minute, with the count.
                if let unreported = holder.context?.admitProblem("send") {
                    let more = unreported > 0 ? " (and \(unreported) more refused since the last report)" : ""
                    log.warning("send on \(namespace) refused: \(refusal.reason)\(more)",
                                ["namespace": .string(namespace), "problem": "refused", "suppressed": .int(unreported)])
                }
            },
            failed: { namespace, error in log.warning("send on \(namespace) failed: \(error)", ["namespace": .string(namespace)]) })
        let context = PluginHostContext.register(pluginID: feature.pluginID, featureID: feature.id, role: .channel(callbacks),
                                                 declaredNamespaces: Set(feature.declarations), logSystem: host.logSystem)
        holder.context = context
        // Attached before open: a send from open has a session to go through, and the app's
        // messages (and a change of app while the plugin opens) wait in the holder until the
        // instance exists.
        let app = await session.attach(namespaces: feature.declarations, to: endpoint)
        var info = JSONObject()
        info.set("device_id", .string(deviceID))
        if let app {
            info.set("session_id", .string(app.sessionID))
            info.set("transport_id", .string(app.transportID))
            info.set("app_id", .string(app.appID))
        }
        let sessionJSON = JSONValue.object(info).serialized()
        let config = host.config(for: feature.pluginID)
        let errorText = PluginErrorText()
        let userdata = feature.userdata
        let watch = PluginCallWatch(bound: host.callTimeout)
        let rc: Int32, calls: ChannelCalls, openError: String?
        if let isolated {
            // In the helper process: its open is bounded there and here; a crash is the helper's.
            let proxy = ChannelProxy(plugin: isolated, featureID: feature.id, config: config, session: sessionJSON,
                                     callbacks: callbacks, onUnavailable: { reason in holder.value?.becameUnavailable(reason) })
            guard let (status, error) = await isolated.open(proxy) else {
                isolated.close(proxy)
                context.unregister()
                await session.detach()
                let error = PluginLoadError(.timedOut, path: isolated.path, pluginID: feature.pluginID,
                    "channel \(feature.id) could not open: its helper process did not answer within \(PluginScan.seconds(isolated.bound)) (plugins.call_timeout) or is restarting")
                log.error(error.description, ["call": "open", "problem": .string(error.kind.rawValue), "path": .string(error.path)])
                throw error
            }
            if status != 0 { isolated.close(proxy) }
            (rc, calls, openError) = (status, ChannelCalls(proxy: proxy), error)
        } else if let vtable {
            let opened = Mutex<(rc: Int32, instance: InstancePointer)?>(nil)
            let inTime = await watch.runBounded("open", on: context.queue) {
                var instance: UnsafeMutableRawPointer?
                let rc = config.withCString { c in
                    sessionJSON.withCString { s in vtable.channel.open!(userdata.pointer, HostServices.table, context.pointer, c, s, &instance, errorText.buffer) }
                }
                opened.withLock { $0 = (rc, InstancePointer(pointer: instance)) }
            }
            guard inTime, let (status, instance) = opened.withLock({ $0 }) else {
                // Behind the open that hangs: if it ever returns an instance, that instance is closed.
                context.queue.async {
                    if let (rc, instance) = opened.withLock({ $0 }), rc == 0 { vtable.channel.close!(instance.pointer) }
                }
                context.unregister()
                await session.detach()
                let error = PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
                    "disabled: channel \(feature.id)'s open did not return within \(PluginScan.seconds(watch.bound)) (plugins.call_timeout)")
                log.error(error.description, ["call": "open", "bound": .double(watch.bound), "problem": .string(error.kind.rawValue), "path": .string(error.path)])
                host.disable(pluginID: feature.pluginID, error)
                throw error
            }
            (rc, calls, openError) = (status, ChannelCalls(vtable: vtable, instance: instance), errorText.text)
        } else {
            throw PluginLoadError(.undeclared, path: "", pluginID: feature.pluginID, "feature \(feature.id) is not a channel")
        }
        guard rc == 0 else {
            context.unregister()
            await session.detach()
            let error = PluginLoadError(.initFailed, path: "", pluginID: feature.pluginID,
                                        "channel \(feature.id) could not open (status \(rc)): \(openError ?? "no reason given")")
            log.error(error.description)
            throw error
        }
        let channel = PluginChannel(feature: feature, context: context, calls: calls, session: session, log: log, watch: watch, host: host)
        watch.arm { [weak channel] overrun in channel?.overran(overrun) }
        holder.value = channel
        holder.startDelivering(to: channel)
        log.info("channel opened", ["namespaces": .string(feature.declarations.joined(separator: ","))])
        return channel
    }

    /// `observer` hears each of the app's messages on the plugin's namespaces too, after the
    /// plugin was handed it (never instead of it), until the channel closes.
    package func observeMessages(_ observer: @escaping @Sendable (_ namespace: String, _ source: String, _ payload: String) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    fileprivate func deliver(namespace: String, source: String, text: String?) {
        guard let text else {
            log.warning("binary message on \(namespace) dropped: plugin channels receive JSON text", ["namespace": .string(namespace)])
            return
        }
        defer { for observer in observers.withLock({ $0 }) { observer(namespace, source, text) } }
        let calls = calls, watch = watch
        context.queue.async {
            watch.run("on_message") { calls.onMessage(namespace: namespace, source: source, payload: text) }
        }
    }

    /// Tells the plugin, on its queue and under its bound, what happens to its app (ABI 1.2).
    fileprivate func tell(_ notice: PluginAppNotice) {
        guard calls.hearsAppEvents, !isClosed else { return }
        log.debug("on_app_event: \(notice.event.name)", ["event": .string(notice.event.name)])
        let calls = calls, watch = watch
        context.queue.async {
            watch.run("on_app_event") { calls.appEvent(notice) }
        }
    }

    /// Sends a command object to the plugin and waits for its answer (at most `timeout`).
    package func command(_ object: JSONValue, timeout: Duration = .seconds(10)) async -> Result<JSONValue, PluginCommandError> {
        guard calls.takesCommands else { return .failure(PluginCommandError("channel \(feature.id) takes no commands")) }
        if let reason = calls.unavailableReason { return .failure(PluginCommandError(reason, unavailable: true)) }
        let text = object.serialized()
        let id: UInt64? = pending.withLock { p in
            guard !p.closed else { return nil }
            defer { p.next += 1 }
            return p.next
        }
        guard let id else { return .failure(PluginCommandError(closedReason ?? "channel \(feature.id) is closed", unavailable: closedReason != nil)) }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            _ = self?.finish(id, .failure(PluginCommandError("channel \(self?.feature.id ?? "") did not answer within \(timeout)")))
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            pending.withLock { $0.waiting[id] = continuation }
            let calls = calls, watch = watch
            context.queue.async {
                watch.run("command") { calls.command(id: id, json: text) }
            }
        }
    }

    /// The plugin's helper process ended (crash, hang, limit): one record for this channel's
    /// device (the helper's own record names the process, not the devices it served), and the
    /// pending commands fail with `reason`.
    func becameUnavailable(_ reason: String) {
        log.warning(reason, ["event": "unavailable"])
        failPending(reason)
    }

    /// Fails every pending command with `reason` (the plugin's helper process crashed).
    func failPending(_ reason: String) {
        let waiting = pending.withLock { p -> [CheckedContinuation<Result<JSONValue, PluginCommandError>, Never>] in
            defer { p.waiting = [:] }
            return Array(p.waiting.values)
        }
        for c in waiting { c.resume(returning: .failure(PluginCommandError(reason, unavailable: true))) }
    }

    /// Closed: by ``close()``, or after the plugin overran a bound.
    package var isClosed: Bool { pending.withLock { $0.closed } }

    /// The pid of the helper process the plugin runs in, nil when it runs in this process.
    package var helperPID: Int32? { calls.proxy?.plugin.helperPID }

    /// Completes a command; false when it is unknown or already completed (logged).
    func finish(_ id: UInt64, _ result: Result<JSONValue, PluginCommandError>) -> Bool {
        guard let continuation = pending.withLock({ $0.waiting.removeValue(forKey: id) }) else {
            log.warning("completion for unknown or finished command \(id) ignored", ["command": .string(String(id))])
            return false
        }
        continuation.resume(returning: result)
        return true
    }

    /// Detaches the namespaces, fails pending commands and closes the plugin instance, waiting
    /// at most the bound for the plugin's `close`. Idempotent.
    package func close() async {
        await startTeardown(callingClose: true).value
    }

    /// The plugin call running now (`on_message`, `command`…), nil between calls.
    var callInProgress: String? { watch.inProgress }

    /// The call that overran and its bound, nil while the plugin keeps its bounds.
    /// `elapsed`: how long the call had run when the overrun was noticed.
    package var overrun: (call: String, bound: Double, elapsed: Double)? { watch.tripped.map { ($0.call, $0.bound, $0.elapsed) } }

    /// A call into the plugin overran: named in an error record, the plugin disabled, the
    /// channel torn down without waiting on the plugin.
    private func overran(_ overrun: PluginCallWatch.Overrun) {
        let error = PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
            "disabled: channel \(feature.id)'s \(overrun.call) did not return within \(PluginScan.seconds(overrun.bound)) (plugins.call_timeout); the channel is closed and the plugin is not called again")
        log.error(error.description, ["call": .string(overrun.call), "bound": .double(overrun.bound), "elapsed": .double(overrun.elapsed),
                                      "problem": .string(error.kind.rawValue), "path": .string(error.path)])
        host.disable(pluginID: feature.pluginID, error)
        _ = startTeardown(callingClose: false)
    }

    /// Why commands fail once the channel was disabled (nil: it was not).
    private var closedReason: String? {
        watch.tripped.map { "channel \(feature.id) was disabled: its \($0.call) did not return within \(PluginScan.seconds($0.bound))" }
    }

    private func startTeardown(callingClose: Bool) -> Task<Void, Never> {
        teardown.withLock { task in
            if let task { return task }
            let started = Task { await self.tearDown(callingClose: callingClose) }
            task = started
            return started
        }
    }

    private func tearDown(callingClose: Bool) async {
        let waiting = pending.withLock { p -> [CheckedContinuation<Result<JSONValue, PluginCommandError>, Never>] in
            p.closed = true
            defer { p.waiting = [:] }
            return Array(p.waiting.values)
        }
        for c in waiting { c.resume(returning: .failure(PluginCommandError(closedReason ?? "channel \(feature.id) closed", unavailable: closedReason != nil))) }
        await session.detach()
        let calls = calls
        let closedInTime: Bool
        if callingClose, watch.tripped == nil {
            closedInTime = await watch.runBounded("close", on: context.queue) { calls.close() }
        } else {
            // Queued behind the call that hangs: runs only if the plugin ever returns from it.
            context.queue.async { calls.close() }
            closedInTime = false
        }
        context.unregister()
        if closedInTime {
            log.info("channel closed")
        } else {
            log.warning("channel closed without waiting for the plugin (it overran plugins.call_timeout)",
                        ["problem": "timed_out"])
        }
    }
}

/// The calls into one channel instance: its vtable in this process, or frames to the helper
/// process of an isolated plugin. Called on the instance's queue.
final class ChannelCalls: @unchecked Sendable {
    private let vtable: castline_channel_vtable?
    private let instance: InstancePointer
    let proxy: ChannelProxy?

    init(vtable: PluginVTableBox, instance: InstancePointer) {
        self.vtable = vtable.channel
        self.instance = instance
        proxy = nil
    }

    init(proxy: ChannelProxy) {
        vtable = nil
        instance = InstancePointer(pointer: nil)
        self.proxy = proxy
    }

    var takesCommands: Bool { proxy != nil || vtable?.command != nil }

    /// The plugin has `on_app_event` (ABI 1.2; an isolated plugin's helper checks its own vtable).
    var hearsAppEvents: Bool { proxy != nil || vtable?.on_app_event != nil }

    func appEvent(_ notice: PluginAppNotice) {
        if let proxy { return proxy.appEvent(notice) }
        guard let appEventFn = vtable?.on_app_event else { return }
        notice.info.withCString { appEventFn(instance.pointer, notice.event.rawValue, $0, notice.info.utf8.count) }
    }

    var unavailableReason: String? { proxy?.unavailableReason }

    func onMessage(namespace: String, source: String, payload: String) {
        if let proxy { return proxy.message(namespace: namespace, source: source, payload: payload) }
        guard let vtable else { return }
        payload.withCString { p in
            namespace.withCString { ns in
                source.withCString { src in vtable.on_message!(instance.pointer, ns, src, p, payload.utf8.count) }
            }
        }
    }

    func command(id: UInt64, json: String) {
        if let proxy {
            _ = proxy.command(id: id, json: json)
            return
        }
        guard let commandFn = vtable?.command else { return }
        json.withCString { commandFn(instance.pointer, id, $0, json.utf8.count) }
    }

    func close() {
        if let proxy { return proxy.close() }
        vtable?.close!(instance.pointer)
    }
}

/// The channel vtable carried across threads.
struct PluginVTableBox: @unchecked Sendable {
    let channel: castline_channel_vtable
}

/// Lets the host-services callback reach the channel created after its context, and the
/// session's delivery reach it: the app's messages and events that come before the instance
/// exists wait here (in order) and are handed over once it does; after that, each goes straight
/// on. The delivery holds the channel weakly (the session holds the delivery until teardown).
final class ChannelHolder: @unchecked Sendable {
    /// What waits for the instance.
    private enum Waiting {
        case message(namespace: String, source: String, text: String?)
        case appEvent(PluginAppNotice)
    }

    private let lock = Mutex<(channel: PluginChannel?, context: PluginHostContext?)>((nil, nil))
    private let inbox = Mutex<(target: WeakPluginChannel?, waiting: [Waiting])>((nil, []))
    var value: PluginChannel? {
        get { lock.withLock { $0.channel } }
        set { lock.withLock { $0.channel = newValue } }
    }

    /// One message from the app: to the instance, or kept until it exists.
    func deliver(namespace: String, source: String, text: String?) {
        let channel = inbox.withLock { box -> PluginChannel? in
            guard let target = box.target else {
                box.waiting.append(.message(namespace: namespace, source: source, text: text))
                return nil
            }
            return target.value
        }
        channel?.deliver(namespace: namespace, source: source, text: text)
    }

    /// What happened to the app: to the instance, or kept until it exists.
    func appEvent(_ notice: PluginAppNotice) {
        let channel = inbox.withLock { box -> PluginChannel? in
            guard let target = box.target else {
                box.waiting.append(.appEvent(notice))
                return nil
            }
            return target.value
        }
        channel?.tell(notice)
    }

    /// The instance exists: what waited goes to it first, in order, under the lock (a message
    /// delivered meanwhile waits its turn), then every later one goes straight on.
    func startDelivering(to channel: PluginChannel) {
        inbox.withLock { box in
            for waiting in box.waiting {
                switch waiting {
                case .message(let namespace, let source, let text): channel.deliver(namespace: namespace, source: source, text: text)
                case .appEvent(let notice): channel.tell(notice)
                }
            }
            box.waiting = []
            box.target = WeakPluginChannel(value: channel)
        }
    }
    /// The channel's host context, from its registration (before open: a send from open is
    /// reported through it too).
    var context: PluginHostContext? {
        get { lock.withLock { $0.context } }
        set { lock.withLock { $0.context = newValue } }
    }
}

extension PluginHost {
    /// Opens the channel feature `id` on a session.
    package func openChannel(id: String, on session: any PluginChannelSession) async throws(PluginLoadError) -> PluginChannel {
        guard let feature = feature(.channel, id: id) else {
            throw PluginLoadError(.undeclared, path: "", "no channel \"\(id)\" is loaded (loaded channels: \(features(of: .channel).map(\.id).joined(separator: ", ")))")
        }
        return try await PluginChannel.open(feature: feature, on: session, host: self)
    }
}

/// A weak reference to a channel instance.
struct WeakPluginChannel {
    weak var value: PluginChannel?
}
