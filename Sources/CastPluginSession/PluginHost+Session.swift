import CastPluginHost
import CastSender

extension PluginHost {
    /// Opens the channel feature `id` on `session`: its namespaces become the session's
    /// (``SessionChannelBinding``).
    package func openChannel(id: String, on session: CastSession) async throws(PluginLoadError) -> PluginChannel {
        try await openChannel(id: id, on: SessionChannelBinding(session: session))
    }

    /// Discovery providers of every loaded discovery feature, for ``DiscoveryManager/add(_:)``.
    package func discoveryProviders() -> [PluginDiscoveryProvider] {
        discoveryFeatures().map(PluginDiscoveryProvider.init)
    }
}
