import CastPluginHost
import CastSender

extension PluginHost {
    /// Discovery providers of every loaded discovery feature, for ``DiscoveryManager/add(_:)``.
    package func discoveryProviders() -> [PluginDiscoveryProvider] {
        discoveryFeatures().map(PluginDiscoveryProvider.init)
    }
}
