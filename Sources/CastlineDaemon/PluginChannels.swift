import CastCore
import CastSender

/// The channel plugins opened on devices' sessions, shared by commands and jobs: one handle per
/// device and plugin feature, opened on first use (concurrent first uses share one opening) and
/// closed when the hub stops. Isolation: an actor.
package actor PluginChannels {
    package nonisolated let plugins: (any ChannelPlugins)?
    private var open: [String: [String: Task<any ChannelHandle, any Error>]] = [:]
    /// The openings whose app messages already become channel events: device id → feature → opening.
    private var observed: [String: [String: Task<any ChannelHandle, any Error>]] = [:]

    package init(plugins: (any ChannelPlugins)?) { self.plugins = plugins }

    /// The loaded channel feature that declares `namespace`, and why it cannot be used now.
    package nonisolated func owner(ofNamespace namespace: String) -> (feature: String, unavailable: String?)? {
        plugins?.owner(ofNamespace: namespace)
    }

    /// `feature`'s handle on device `id`, opened on `link` the first time.
    package func handle(feature: String, device id: String, deviceName: String, link: CastSession) async throws(ControlError) -> any ChannelHandle {
        guard let plugins else { throw ControlError(.unavailable, "no_plugins", "no channel plugins are loaded") }
        let opening: Task<any ChannelHandle, any Error>
        if let existing = open[id]?[feature], (try? await existing.value)?.isClosed != true {
            opening = existing
        } else {
            opening = Task { try await plugins.open(feature: feature, on: link) }
            open[id, default: [:]][feature] = opening
        }
        do {
            return try await opening.value
        } catch {
            // A failed opening is not kept: the next use tries again.
            if open[id]?[feature] == opening { open[id]?[feature] = nil }
            throw ControlError(.unavailable, "channel_unavailable", "channel plugin \(feature) cannot open on \(deviceName): \(error)")
        }
    }

    /// True the first time for the handle now open for `feature` on device `id` (a handle
    /// opened again after its plugin was disabled counts anew).
    package func markObserved(feature: String, device id: String) -> Bool {
        guard let opening = open[id]?[feature], observed[id]?[feature] != opening else { return false }
        observed[id, default: [:]][feature] = opening
        return true
    }

    /// Closes every handle (the hub is stopping).
    package func closeAll() async {
        let all = open.values.flatMap(\.values)
        open = [:]
        for opening in all { if let handle = try? await opening.value { await handle.close() } }
    }
}
