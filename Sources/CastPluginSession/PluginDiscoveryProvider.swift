import CastCore
import CastPluginHost
import CastSender

/// A plugin's discovery feature (the host's ``PluginDiscovery``) as a ``DiscoveryProvider`` for the
/// ``DiscoveryManager``.
///
/// Each device report is checked (the required keys) before it reaches the manager; a bad one is
/// refused with one error line. The plugin's start and stop are bounded by the host.
package final class PluginDiscoveryProvider: DiscoveryProvider {
    package let name: String
    package let discovery: PluginDiscovery
    package var feature: PluginFeature { discovery.feature }

    package init(_ discovery: PluginDiscovery) {
        self.discovery = discovery
        name = discovery.feature.id
    }

    package func start(_ sink: DiscoveryProviderSink) async throws(DiscoveryProviderError) {
        let providerName = name
        let reports = PluginDiscovery.Reports(
            found: { json in
                switch PluginDiscoveryProvider.device(from: json, provider: providerName) {
                case .success(let device):
                    sink.found(device)
                    return nil
                case .failure(let problem):
                    return problem.reason
                }
            },
            lost: { sink.lost(deviceID: $0) },
            problem: { sink.problem($0) })
        do {
            try await discovery.start(appIDs: sink.appIDs, reports: reports)
        } catch {
            throw DiscoveryProviderError(error.reason)
        }
    }

    package func stop() async {
        await discovery.stop()
    }

    /// A device report → ``CastDevice``. Required: `id`, `name`, `host`; `port` defaults to 8009.
    static func device(from json: JSONValue, provider: String) -> Result<CastDevice, DiscoveryProviderError> {
        guard case .object(let o) = json else { return .failure(DiscoveryProviderError("the device report is not a JSON object")) }
        guard let id = o["id"]?.string, !id.isEmpty else { return .failure(DiscoveryProviderError("the device report has no \"id\" string")) }
        guard let host = o["host"]?.string, !host.isEmpty else { return .failure(DiscoveryProviderError("device \(id): no \"host\" string")) }
        let port = o["port"].flatMap { $0.int } ?? 8009
        guard (1...65535).contains(port) else { return .failure(DiscoveryProviderError("device \(id): port \(port) is out of range")) }
        var device = CastDevice(
            id: id, friendlyName: o["name"]?.string ?? id, host: host, port: Int(port),
            modelName: o["model"]?.string ?? "", statusText: o["status_text"]?.string, provider: provider)
        if case .array(let apps)? = o["app_ids"] { device.supportedAppIDs = Set(apps.compactMap(\.string)) }
        if case .array(let addresses)? = o["addresses"] { device.addresses = addresses.compactMap(\.string) }
        if let ca = o["capabilities"]?.int, ca >= 0 { device.capabilities = CastDeviceCapabilities(rawValue: UInt64(ca)) }
        return .success(device)
    }
}

/// The device-report check, for tests and tools (`plugins inspect`): the problem text or the device.
package enum PluginDiscoveryProviderProbe {
    package static func check(_ report: JSONValue) -> String? {
        if case .failure(let problem) = PluginDiscoveryProvider.device(from: report, provider: "probe") { return problem.reason }
        return nil
    }

    package static func device(_ report: JSONValue) -> CastDevice? {
        try? PluginDiscoveryProvider.device(from: report, provider: "probe").get()
    }
}
