import CastPluginKit

/// web-pages: web pages and dashboards on TVs, through the receiver apps made for them:
/// DashCast (any URL) and Home Assistant Cast (a Home Assistant dashboard). castline's
/// `castline site`, `POST /v1/devices/{device}/site` and jobs with `site:` open these channels.
enum WebPagesPlugin: CastlinePlugin {
    static let id = "web-pages"
    static let version = "1.0.0"
    static let summary = "web pages on TVs: DashCast (urn:x-cast:com.madmod.dashcast), Home Assistant Cast (urn:x-cast:com.nabucasa.hast) and castline's receiver (urn:x-cast:net.castline.page)"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [
        .channel(DashCastChannel.self, id: "dashcast"),
        .channel(HomeAssistantChannel.self, id: "home-assistant"),
        .channel(CastlinePageChannel.self, id: "castline-receiver"),
    ]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(WebPagesPlugin.self) }
