/// What a channel plugin is told about the app it talks to (ABI 1.2 `on_app_event`): one call
/// to make, its event and its `info_json`. Who watches the app makes them (CastPluginSession's
/// `ChannelAppWatch`, from a session's updates); the host hands them to the plugin.
package struct PluginAppNotice: Sendable, Equatable {
    /// `castline_app_event`'s values.
    package enum Event: Int32, Sendable, Equatable {
        case stopped = 1
        case relaunched = 2
        case sessionResumed = 3

        /// How the host's records name it (`on_app_event: app_stopped`).
        package var name: String {
            switch self {
            case .stopped: "app_stopped"
            case .relaunched: "app_relaunched"
            case .sessionResumed: "session_resumed"
            }
        }
    }

    package let event: Event
    package let info: String
    /// The transportId of the app the channel talks to after this notice (nil: none runs):
    /// what an isolated plugin's helper refuses sends by.
    package let current: String?

    package init(event: Event, info: String, current: String?) {
        self.event = event
        self.info = info
        self.current = current
    }
}
