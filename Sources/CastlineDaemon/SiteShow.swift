import CastCore
import CastSender

/// Shows a site on one device: its app launched unless it runs, its channel plugin opened, the
/// page (or dashboard) sent. The one way commands and jobs put a site on a TV.
package enum SiteShow {
    /// The app's session and the plugin's answer. `force`: the page's effective force (the
    /// pre-flight's decision); ignored for a dashboard. `launchTimeout`: how long a launch may
    /// take (nil: the session's request timeout). `relaunch`: launch the app even if it runs (to
    /// bring it to the front of a dark or covered screen). `receiverAppID`: show a page with
    /// castline's receiver, registered under this app id (``CastlineReceiver``).
    package static func show(_ site: SiteArguments, force: Bool, on link: CastSession, device: CastDevice,
                             channels: PluginChannels, timeout: Double = 15,
                             launchTimeout: Double? = nil, relaunch: Bool = false,
                             receiverAppID: String? = nil) async throws(ControlError) -> (app: ApplicationInfo, reply: JSONValue) {
        // castline's own receiver (a page only): the operator's app id, its namespace; it frames
        // every page (forcing would navigate away from the page that keeps it alive).
        let ownReceiver: String? = if case .page = site { receiverAppID } else { nil }
        let appID = ownReceiver ?? site.appID
        let namespace = ownReceiver != nil ? CastlineReceiver.namespace : site.namespace
        guard let (feature, unavailable) = channels.owner(ofNamespace: namespace) else {
            throw ControlError(.unavailable, "site_plugin_missing",
                               "no channel plugin declares \(namespace): the web-pages plugin (libCastlinePluginWebPages.so) is not loaded; "
                               + "`castline plugins` lists what is")
        }
        if let unavailable { throw ControlPlane.pluginUnavailable(feature, namespace: namespace, unavailable) }
        let app: ApplicationInfo
        if !relaunch, let running = await link.application, running.appID == appID { app = running } else {
            app = try await ControlPlane.launch(appID, on: link, device: device, timeout: launchTimeout, evenIfRunning: relaunch)
        }
        let handle = try await channels.handle(feature: feature, device: device.id, deviceName: device.friendlyName, link: link)
        let command: JSONValue
        switch site {
        case .page(let url, _, let every, _):
            command = ["url": .string(url), "force": .bool(force && ownReceiver == nil), "reload_every": .double(every)]
        case .dashboard(let view, let path):
            var object = JSONObject()
            if let view { object.set("view_path", .string(view)) }
            if let path { object.set("url_path", .string(path)) }
            command = .object(object)
        }
        switch await handle.command(command, timeout: timeout) {
        case .success(let reply): return (app, reply)
        case .failure(let error) where error.code == "plugin_unavailable": throw error
        case .failure(let error): throw ControlError(.refused, error.code, "\(device.friendlyName): \(error.message)")
        }
    }

    static func appName(_ site: SiteArguments) -> String {
        if case .dashboard = site { return "Home Assistant Cast" }
        return "DashCast"
    }
}
