internal import CCastPluginABI
import CastCore
import CastLogging
import Dispatch
import Synchronization

/// Lets exactly one of two racing callbacks resume a continuation.
final class ResumeGate: Sendable {
    private let claimed = Mutex(false)
    func claim() -> Bool { claimed.withLock { was in defer { was = true }; return !was } }
}

/// A plugin's discovery feature, started and stopped under the host's bounds. The host knows
/// nothing of discovery managers: CastPluginSession's `PluginDiscoveryProvider` makes this a
/// CastSender `DiscoveryProvider`.
///
/// The plugin reports devices as JSON through `device_found`; each report goes to
/// ``Reports/found``, which checks it and names what is wrong (the host refuses it with one error
/// line). Its `start` and `stop` each get ``PluginHost/callTimeout``: a start past it fails; a
/// stop past it is named in an error record (class `PluginDiscoveryProvider`, `problem:
/// timed_out`) and disables the plugin, and the stop returns without waiting for it.
package final class PluginDiscovery: @unchecked Sendable {
    package let feature: PluginFeature
    /// Seconds the plugin's start may take before it counts as failed.
    package let startTimeout: Double
    /// Immutable function pointers into a never-unloaded image.
    private let vtable: castline_discovery_vtable
    private let host: PluginHost
    private let running = Mutex<Running?>(nil)

    private struct Running: @unchecked Sendable {
        let context: PluginHostContext
        let instance: UnsafeMutableRawPointer?
    }

    /// Where the plugin's reports go, from any thread.
    package struct Reports: Sendable {
        /// A device report (checked JSON); the problem with it (refused), or nil (taken).
        package var found: @Sendable (JSONValue) -> String?
        /// The device with this id is gone.
        package var lost: @Sendable (String) -> Void
        /// The plugin's problem (nil: it is over).
        package var problem: @Sendable (String?) -> Void

        package init(found: @escaping @Sendable (JSONValue) -> String?, lost: @escaping @Sendable (String) -> Void,
                     problem: @escaping @Sendable (String?) -> Void) {
            self.found = found
            self.lost = lost
            self.problem = problem
        }
    }

    /// Why a start failed (logged already): the reason.
    package struct StartFailure: Error {
        package let reason: String
    }

    init(feature: PluginFeature, vtable: castline_discovery_vtable, host: PluginHost) {
        self.feature = feature
        self.vtable = vtable
        self.host = host
        startTimeout = host.callTimeout
    }

    /// Starts the plugin for the apps `appIDs` (empty: any); its reports go to `reports`.
    package func start(appIDs: Set<String>, reports: Reports) async throws(StartFailure) {
        let callbacks = PluginHostContext.DiscoveryCallbacks(found: reports.found, lost: reports.lost, problem: reports.problem)
        let context = PluginHostContext.register(pluginID: feature.pluginID, featureID: feature.id, role: .discovery(callbacks),
                                                 logSystem: host.logSystem)
        let config = host.config(for: feature.pluginID)
        let appIDs = JSONValue.array(appIDs.sorted().map { .string($0) }).serialized()
        let errorText = PluginErrorText()
        let vtable = vtable, userdata = feature.userdata
        // The plugin's start may block (avahi-client waits on a D-Bus system bus that accepts but
        // never answers): bounded by `startTimeout`; a start that finishes later is undone.
        let gate = ResumeGate()
        let timeout = startTimeout
        // Function pointers into a never-unloaded image and a buffer only this start writes.
        struct StartCall: @unchecked Sendable { let vtable: castline_discovery_vtable; let errorText: PluginErrorText }
        let call = StartCall(vtable: vtable, errorText: errorText)
        let started: (Int32, InstancePointer)? = await withCheckedContinuation { continuation in
            context.queue.async {
                var instance: UnsafeMutableRawPointer?
                let rc = config.withCString { c in
                    appIDs.withCString { a in
                        call.vtable.start!(userdata.pointer, HostServices.table, context.pointer, c, a, &instance, call.errorText.buffer)
                    }
                }
                let result = (rc, InstancePointer(pointer: instance))
                if !gate.claim() {
                    if rc == 0 { call.vtable.stop!(result.1.pointer) }
                    return
                }
                continuation.resume(returning: result)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if gate.claim() { continuation.resume(returning: nil) }
            }
        }
        guard let (rc, instance) = started else {
            context.unregister()
            let reason = "discovery plugin \(feature.qualifiedName) did not start within \(Int(timeout)) s (avahi: is the D-Bus system bus answering? `castline doctor` checks it)"
            host.log.error(reason, ["plugin": .string(feature.pluginID), "feature": .string(feature.id)])
            throw StartFailure(reason: reason)
        }
        guard rc == 0 else {
            context.unregister()
            let reason = "discovery plugin \(feature.qualifiedName) could not start (status \(rc)): \(errorText.text ?? "no reason given")"
            host.log.error(reason, ["plugin": .string(feature.pluginID), "feature": .string(feature.id)])
            throw StartFailure(reason: reason)
        }
        running.withLock { $0 = Running(context: context, instance: instance.pointer) }
    }

    /// Stops the plugin (within its bound); nothing when it does not run.
    package func stop() async {
        guard let r = running.withLock({ s -> Running? in
            defer { s = nil }
            return s
        }) else { return }
        let vtable = vtable, instance = InstancePointer(pointer: r.instance)
        let watch = PluginCallWatch(bound: host.callTimeout)
        let feature = feature, host = host
        watch.arm { overrun in
            let error = PluginLoadError(.timedOut, path: host.path(ofPlugin: feature.pluginID), pluginID: feature.pluginID,
                "disabled: discovery \(feature.id)'s \(overrun.call) did not return within \(PluginScan.seconds(overrun.bound)) (plugins.call_timeout)")
            Logger(class: "PluginDiscoveryProvider", system: host.logSystem).error(error.description, [
                "plugin": .string(feature.pluginID), "feature": .string(feature.id), "call": .string(overrun.call),
                                               "bound": .double(overrun.bound), "elapsed": .double(overrun.elapsed), "problem": .string(error.kind.rawValue),
                "path": .string(error.path)])
            host.disable(pluginID: feature.pluginID, error)
        }
        struct StopCall: @unchecked Sendable { let vtable: castline_discovery_vtable }
        let call = StopCall(vtable: vtable)
        _ = await watch.runBounded("stop", on: r.context.queue) { call.vtable.stop!(instance.pointer) }
        r.context.unregister()
    }
}

/// A plugin's instance pointer carried across a queue hop.
struct InstancePointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
}

extension PluginHost {
    /// Every loaded discovery feature, ready to start.
    package func discoveryFeatures() -> [PluginDiscovery] {
        features(of: .discovery).compactMap { f in
            guard case .discovery(let v) = f.vtable else { return nil }
            return PluginDiscovery(feature: f, vtable: v, host: self)
        }
    }
}
