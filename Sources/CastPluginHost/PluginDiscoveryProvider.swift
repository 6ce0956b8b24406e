internal import CCastPluginABI
import CastCore
import CastLogging
import CastSender
import Dispatch
import Synchronization

/// Lets exactly one of two racing callbacks resume a continuation.
final class ResumeGate: Sendable {
    private let claimed = Mutex(false)
    func claim() -> Bool { claimed.withLock { was in defer { was = true }; return !was } }
}

/// A plugin's discovery feature as a ``DiscoveryProvider`` for the ``DiscoveryManager``.
///
/// The plugin reports devices as JSON through `device_found`; each report is checked (JSON, the
/// required keys) before it reaches the manager, and a bad one is refused with one error line.
/// Its `start` and `stop` each get ``PluginHost/callTimeout``: a start past it fails the provider;
/// a stop past it is named in an error record (class `PluginDiscoveryProvider`, `problem: timed_out`) and
/// disables the plugin, and the stop returns without waiting for it.
public final class PluginDiscoveryProvider: DiscoveryProvider, @unchecked Sendable {
    public let name: String
    public let feature: PluginFeature
    /// Seconds the plugin's start may take before it counts as failed.
    public var startTimeout: Double
    /// Immutable function pointers into a never-unloaded image.
    private let vtable: castline_discovery_vtable
    private let host: PluginHost
    private let running = Mutex<Running?>(nil)

    private struct Running: @unchecked Sendable {
        let context: PluginHostContext
        let instance: UnsafeMutableRawPointer?
    }

    init(feature: PluginFeature, vtable: castline_discovery_vtable, host: PluginHost) {
        self.feature = feature
        self.vtable = vtable
        self.host = host
        name = feature.id
        startTimeout = host.callTimeout
    }

    public func start(_ sink: DiscoveryProviderSink) async throws(DiscoveryProviderError) {
        let providerName = name
        let callbacks = PluginHostContext.DiscoveryCallbacks(
            found: { json in
                switch PluginDiscoveryProvider.device(from: json, provider: providerName) {
                case .success(let device):
                    sink.found(device)
                    return nil
                case .failure(let problem):
                    return problem.text
                }
            },
            lost: { sink.lost(deviceID: $0) },
            problem: { sink.problem($0) })
        let context = PluginHostContext.register(pluginID: feature.pluginID, featureID: feature.id, role: .discovery(callbacks),
                                                 logSystem: host.logSystem)
        let config = host.config(for: feature.pluginID)
        let appIDs = JSONValue.array(sink.appIDs.sorted().map { .string($0) }).serialized()
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
            throw DiscoveryProviderError(reason)
        }
        guard rc == 0 else {
            context.unregister()
            let reason = "discovery plugin \(feature.qualifiedName) could not start (status \(rc)): \(errorText.text ?? "no reason given")"
            host.log.error(reason, ["plugin": .string(feature.pluginID), "feature": .string(feature.id)])
            throw DiscoveryProviderError(reason)
        }
        running.withLock { $0 = Running(context: context, instance: instance.pointer) }
    }

    public func stop() async {
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

    /// A device report → ``CastDevice``. Required: `id`, `name`, `host`; `port` defaults to 8009.
    static func device(from json: JSONValue, provider: String) -> Result<CastDevice, FeatureProblem> {
        guard case .object(let o) = json else { return .failure(FeatureProblem("the device report is not a JSON object")) }
        guard let id = o["id"]?.string, !id.isEmpty else { return .failure(FeatureProblem("the device report has no \"id\" string")) }
        guard let host = o["host"]?.string, !host.isEmpty else { return .failure(FeatureProblem("device \(id): no \"host\" string")) }
        let port = o["port"].flatMap { $0.int } ?? 8009
        guard (1...65535).contains(port) else { return .failure(FeatureProblem("device \(id): port \(port) is out of range")) }
        var device = CastDevice(id: id, friendlyName: o["name"]?.string ?? id, host: host, port: Int(port),
                                modelName: o["model"]?.string ?? "", statusText: o["status_text"]?.string, provider: provider)
        if case .array(let apps)? = o["app_ids"] { device.supportedAppIDs = Set(apps.compactMap(\.string)) }
        if case .array(let addresses)? = o["addresses"] { device.addresses = addresses.compactMap(\.string) }
        if let ca = o["capabilities"]?.int, ca >= 0 { device.capabilities = CastDeviceCapabilities(rawValue: UInt64(ca)) }
        return .success(device)
    }
}

/// A plugin's instance pointer carried across a queue hop.
struct InstancePointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
}

extension PluginHost {
    /// Discovery providers of every loaded discovery feature, for ``DiscoveryManager/add(_:)``.
    public func discoveryProviders() -> [PluginDiscoveryProvider] {
        features(of: .discovery).compactMap { f in
            guard case .discovery(let v) = f.vtable else { return nil }
            return PluginDiscoveryProvider(feature: f, vtable: v, host: self)
        }
    }
}

/// The device-report check, for tests and tools (`plugins inspect`): the problem text or the device.
public enum PluginDiscoveryProviderProbe {
    public static func check(_ report: JSONValue) -> String? {
        if case .failure(let problem) = PluginDiscoveryProvider.device(from: report, provider: "probe") { return problem.text }
        return nil
    }

    public static func device(_ report: JSONValue) -> CastDevice? {
        try? PluginDiscoveryProvider.device(from: report, provider: "probe").get()
    }
}
