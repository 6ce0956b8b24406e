import CastCore
import CastHTTP

/// What a site cast shows (`POST /v1/devices/{device}/site`, `castline site`, a job's `site:`):
/// a web page through DashCast, or a Home Assistant dashboard through Home Assistant Cast.
package enum SiteArguments: Sendable, Equatable {
    /// `url` with DashCast. `force`: nil lets the pre-flight decide (a page that refuses frames,
    /// or an http page, is forced). `reloadEvery`: seconds between reloads (0: never).
    /// `check`: run the pre-flight (off: the URL is sent as it is).
    case page(url: String, force: Bool?, reloadEvery: Double, check: Bool)
    /// A view of the Home Assistant the web-pages plugin is configured for.
    case dashboard(viewPath: String?, urlPath: String?)

    /// DashCast and Home Assistant Cast: their app ids and namespaces.
    package static let dashCastApp = "84912283"
    package static let dashCastNamespace = "urn:x-cast:com.madmod.dashcast"
    package static let homeAssistantApp = "A078F6B0"
    package static let homeAssistantNamespace = "urn:x-cast:com.nabucasa.hast"

    /// `{"url": …, "force": bool, "reload_every": s, "preflight": bool}` or
    /// `{"home_assistant": {"view_path": …, "url_path": …}}`.
    package init(json: JSONValue) throws(ControlError) {
        let args = try ArgumentObject(json, action: .site)
        if let dashboard = args.value("home_assistant") {
            guard args.value("url") == nil else {
                throw ControlError.usage("site_ambiguous", "site: give \"url\" (a page) or \"home_assistant\" (a dashboard), not both")
            }
            let nested = ControlAction.site.route.body.fields.first { $0.name == "home_assistant" }?.fields.map(\.name) ?? []
            let view = try ArgumentObject(dashboard, allowed: nested, what: "site.home_assistant")
            self = .dashboard(viewPath: try view.string("view_path"), urlPath: try view.string("url_path"))
            return
        }
        guard let url = try args.string("url") else {
            throw ControlError.usage("missing_url", "site needs \"url\": an http(s) URL (or \"home_assistant\": {\"view_path\": …})")
        }
        self = try .page(url: url, force: args.bool("force"), reloadEvery: args.number("reload_every") ?? 0,
                         check: args.bool("preflight") ?? true)
        try validate()
    }

    /// Checks a page's URL and reload interval (the JSON and the command line both come here).
    package func validate() throws(ControlError) {
        guard case .page(let url, _, let every, _) = self else { return }
        guard HTTPURL(url) != nil else { throw ControlError.usage("bad_url", "site: \"\(url)\" is not an http(s) URL") }
        guard every >= 0, every <= 86_400 else { throw ControlError.usage("bad_reload_every", "site: \"reload_every\" must be 0-86400 seconds") }
    }

    package var appID: String {
        if case .dashboard = self { return Self.homeAssistantApp }
        return Self.dashCastApp
    }

    package var namespace: String {
        if case .dashboard = self { return Self.homeAssistantNamespace }
        return Self.dashCastNamespace
    }

    /// What the site is, for lines and logs: the page's URL, or the dashboard's view.
    package var label: String {
        switch self {
        case .page(let url, _, _, _): return url
        case .dashboard(let view, let path): return "Home Assistant " + ([path, view].compactMap { $0 }.joined(separator: "/").nonEmpty ?? "default dashboard")
        }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
