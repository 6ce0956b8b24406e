import CastCore
import CastPluginHost
import CastSender

/// What a channel plugin is told about the app it talks to (ABI 1.2 `on_app_event`), read from
/// its session's updates: the app stopped (or another replaced it), an app with one of the
/// channel's namespaces runs again, or the link came back after a drop. Pure; its notices are
/// the host's ``PluginAppNotice``s.
package struct ChannelAppWatch: Sendable {
    private let deviceID: String
    private let namespaces: Set<String>
    /// The app the channel talks to now; nil while none runs.
    package private(set) var app: ApplicationInfo?

    package init(deviceID: String, namespaces: [String], app: ApplicationInfo?) {
        self.deviceID = deviceID
        self.namespaces = Set(namespaces)
        self.app = app
    }

    /// The notices `update` calls for, in order.
    package mutating func apply(_ update: CastSessionUpdate) -> [PluginAppNotice] {
        switch update {
        case .deviceStatus(let status):
            let running = CastSession.followed(among: status.applications)
            if running?.sessionID == app?.sessionID { return [] }
            var notices: [PluginAppNotice] = []
            if let old = app {
                notices.append(notice(.stopped, old, reason: running.map { "replaced by \($0.appID)" } ?? "stopped"))
            }
            // An app that lists its namespaces and none of the channel's is no app to talk to.
            if let running, running.namespaces.isEmpty || running.namespaces.contains(where: { namespaces.contains($0.rawValue) }) {
                app = running
                notices.append(notice(.relaunched, running, reason: nil))
            } else {
                app = nil
            }
            return notices
        case .event(.didResume, _):
            return [notice(.sessionResumed, app, reason: nil)]
        default:
            return []
        }
    }

    private func notice(_ event: PluginAppNotice.Event, _ app: ApplicationInfo?, reason: String?) -> PluginAppNotice {
        var info = JSONObject()
        info.set("device_id", .string(deviceID))
        if let app {
            info.set("app_id", .string(app.appID))
            info.set("session_id", .string(app.sessionID))
            info.set("transport_id", .string(app.transportID))
        }
        if let reason { info.set("reason", .string(reason)) }
        return PluginAppNotice(event: event, info: JSONValue.object(info).serialized(), current: event == .stopped ? nil : app?.transportID)
    }
}
