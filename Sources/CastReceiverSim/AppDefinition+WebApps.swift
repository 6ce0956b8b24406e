import CastCore

/// The receiver apps that show web pages, as the real ones answer.
extension AppDefinition {
    /// DashCast (`84912283`, `urn:x-cast:com.madmod.dashcast`): shows the URL it is sent, framed,
    /// or as the whole page with `force`. It answers nothing (pychromecast expects no reply).
    public static let dashCast = AppDefinition(
        appID: "84912283", displayName: "DashCast", namespaces: [],
        supportedMediaCommands: [],
        customNamespaces: [CustomNamespaceBehaviour(namespace: "urn:x-cast:com.madmod.dashcast", mode: .dashCast)]
    )

    /// castline's receiver page (``CastlineReceiver``), under the id the simulator knows it by:
    /// shows the page it is sent, framed, as DashCast; plays silent media of its own, so the
    /// device's idle timer and ambient mode leave it alone (docs/receiver.md).
    public static let castlineReceiver: AppDefinition = {
        var app = AppDefinition(appID: CastlineReceiver.simulatorAppID, displayName: "castline receiver", namespaces: [],
                                supportedMediaCommands: [],
                                customNamespaces: [CustomNamespaceBehaviour(namespace: CastNamespace(rawValue: CastlineReceiver.namespace), mode: .dashCast)])
        app.keepsItselfAlive = true
        return app
    }()

    /// Home Assistant's dashboard receiver (`A078F6B0`, `urn:x-cast:com.nabucasa.hast`): `connect`
    /// (an https `hassUrl` and a refresh token), then `show_lovelace_view`; answers
    /// `receiver_status` or `receiver_error` with Home Assistant Cast's error codes.
    public static let homeAssistantDashboard = AppDefinition(
        appID: "A078F6B0", displayName: "Home Assistant Lovelace", namespaces: [],
        supportedMediaCommands: [],
        customNamespaces: [CustomNamespaceBehaviour(namespace: "urn:x-cast:com.nabucasa.hast", mode: .homeAssistant)]
    )
}

extension AppDefinition {
    /// DashCast or Home Assistant's dashboard: an app whose state is a page it shows.
    public var showsWebPages: Bool {
        customNamespaces.contains { if case .dashCast = $0.mode { return true }; if case .homeAssistant = $0.mode { return true }; return false }
    }
}

/// What a web app shows: the page and, for Home Assistant, its connection. Shown under
/// `app.page` in the control socket's `list`.
public struct WebAppPage: Sendable, Equatable {
    public var url: String?
    public var force = false
    public var reloadMillis: Int64 = 0
    /// Home Assistant: the instance it connected to, and the view it shows.
    public var hassURL: String?
    public var hassUUID: String?
    public var lovelacePath: JSONValue = .null
    public var urlPath: JSONValue = .null
    public var showDemo = false
    /// Why the page is not shown though the app runs (`"mixed-content"`: DashCast framed an
    /// `http://` page in its `https://` receiver page; the browser blocks it, the TV stays blank).
    public var blocked: String?

    public var json: JSONValue {
        var object = JSONObject()
        if let url { object.set("url", .string(url)) }
        if url != nil {
            object.set("force", .bool(force))
            object.set("reloadTime", .int(reloadMillis))
            if let blocked { object.set("blocked", .string(blocked)) }
        }
        if let hassURL {
            object.set("hassUrl", .string(hassURL))
            object.set("hassUUID", hassUUID.map { .string($0) } ?? .null)
            object.set("lovelacePath", lovelacePath)
            object.set("urlPath", urlPath)
        }
        if showDemo { object.set("showDemo", true) }
        return .object(object)
    }
}
