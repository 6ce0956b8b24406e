import CastCore
import CastPluginHost
import CastPluginSession
import CastSender
import CastlineDaemon

/// The control plane's view of the plugin host's channel features: which declares a namespace,
/// and each one opened on a device as a handle that takes commands.
struct HostChannelPlugins: ChannelPlugins {
    let host: PluginHost

    func owner(ofNamespace namespace: String) -> (feature: String, unavailable: String?)? {
        guard let (feature, availability) = host.channelOwner(ofNamespace: namespace) else { return nil }
        if case .unavailable(let reason) = availability { return (feature.id, reason) }
        return (feature.id, nil)
    }

    func states() -> [PluginRunState] {
        host.runStates.map {
            PluginRunState(id: $0.id, version: $0.version, path: $0.path, state: $0.state, reason: $0.reason, restarts: $0.restarts,
                           helperPID: $0.helperPID, features: $0.features)
        }
    }

    func reenableDisabled() -> [String] { host.reenableDisabled() }

    func open(feature: String, on session: CastSession) async throws -> any ChannelHandle {
        PluginChannelHandle(channel: try await host.openChannel(id: feature, on: session))
    }
}

struct PluginChannelHandle: ChannelHandle {
    let channel: PluginChannel

    func command(_ object: JSONValue, timeout: Double) async -> Result<JSONValue, ControlError> {
        await channel.command(object, timeout: .milliseconds(Int64(timeout * 1000))).mapError { error in
            error.unavailable
                ? ControlError(.unavailable, "plugin_unavailable", "channel plugin \(channel.feature.id) is unavailable: \(error)")
                : ControlError(.refused, "channel_plugin_error", "channel \(channel.feature.id): \(error)")
        }
    }

    var isClosed: Bool { channel.isClosed }

    func close() async { await channel.close() }

    func observeMessages(_ observer: @escaping @Sendable (String, String, String) -> Void) { channel.observeMessages(observer) }
}
