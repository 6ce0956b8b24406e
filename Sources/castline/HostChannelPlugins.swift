import CastCore
import CastPluginHost
import CastSender
import CastlineDaemon

/// The control plane's view of the plugin host's channel features: which declares a namespace,
/// and each one opened on a device as a handle that takes commands.
struct HostChannelPlugins: ChannelPlugins {
    let host: PluginHost

    func feature(forNamespace namespace: String) -> String? {
        host.features(of: .channel).first { $0.declarations.contains(namespace) }?.id
    }

    func open(feature: String, on session: CastSession) async throws -> any ChannelHandle {
        PluginChannelHandle(channel: try await host.openChannel(id: feature, on: session))
    }
}

struct PluginChannelHandle: ChannelHandle {
    let channel: PluginChannel

    func command(_ object: JSONValue, timeout: Double) async -> Result<JSONValue, ControlError> {
        await channel.command(object, timeout: .milliseconds(Int64(timeout * 1000))).mapError { error in
            ControlError(.refused, "channel_plugin_error", "channel \(channel.feature.id): \(error)")
        }
    }

    func close() async { await channel.close() }
}
