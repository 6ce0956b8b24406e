import CastJSON
import CastPluginKit

/// Channel `dashcast` on `urn:x-cast:com.madmod.dashcast`: shows a web page with the DashCast
/// receiver app (`84912283`, the one pychromecast and catt use).
///
/// command `{"url": "https://…", "force": false, "reload_every": 60}` → sends DashCast's message
/// `{"url", "force", "reload", "reload_time"}` (milliseconds; `reload` only without `force`: a
/// forced page replaces the receiver's own page, which then cannot reload it) → completes with
/// what was sent. DashCast answers nothing, so sent is as far as the app tells.
final class DashCastChannel: ChannelPlugin {
    static let namespaces = ["urn:x-cast:com.madmod.dashcast"]
    private let host: PluginHostServices

    init(host: PluginHostServices, config: String, session: String) throws(PluginError) {
        self.host = host
        let info = try JSONValue.parsePluginInput(session)
        if let app = info["app_id"]?.string, app != "84912283" {
            host.log(.warning, class: "DashCastChannel", "the running app is \(app), not DashCast (84912283): messages go unanswered")
        }
    }

    func command(id: UInt64, json: String) {
        Self.sendPage(id: id, json: json, host: host, namespace: Self.namespaces[0], app: "DashCast", logClass: "DashCastChannel")
    }

    /// Sends a page command as DashCast's message on `namespace` (DashCast's, or a receiver that
    /// speaks it), completing the command with what was sent.
    static func sendPage(id: UInt64, json: String, host: PluginHostServices, namespace: String, app: String, logClass: String) {
        let message: JSONValue
        do { message = try Self.message(for: JSONValue.parsePluginInput(json)) } catch {
            host.fail(command: id, reason: error.reason)
            return
        }
        let rc = host.send(namespace: namespace, payload: message.serialized())
        guard rc == 0 else {
            host.fail(command: id, reason: "the host could not send the page to \(app) (status \(rc))")
            return
        }
        host.log(.info, class: logClass, "page sent to \(app)", fields: [
            "url": .string(message["url"]?.string ?? ""), "force": .bool(message["force"]?.bool ?? false),
        ])
        host.complete(command: id, json: JSONValue.object(["shown": message]).serialized())
    }

    /// DashCast's message for a command; a missing or non-http(s) URL, or a bad reload interval,
    /// is refused with what to fix.
    static func message(for command: JSONValue) throws(PluginError) -> JSONValue {
        guard let url = command["url"]?.string else { throw PluginError("a page needs \"url\": an http(s) URL") }
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw PluginError("\"url\" must be an http(s) URL, not \(url)")
        }
        let force = command["force"]?.bool ?? false
        let every = command["reload_every"]?.double ?? 0
        guard every >= 0, every <= 86_400 else { throw PluginError("\"reload_every\" must be 0-86400 seconds") }
        let reload = !force && every > 0
        return ["url": .string(url), "force": .bool(force), "reload": .bool(reload),
                "reload_time": .int(reload ? Int64((every * 1000).rounded()) : 0)]
    }

    func didReceive(namespace: String, source: String, payload: String) {
        host.log(.debug, class: "DashCastChannel", "DashCast said something", fields: ["payload": .string(String(payload.prefix(200)))])
    }

    func close() {}
}

/// Channel `castline-receiver` on `urn:x-cast:net.castline.page`: shows a web page with castline's
/// own receiver page (receiver/castline-receiver.html, under the app id the operator registered;
/// docs/receiver.md). It takes DashCast's message, and keeps itself alive with silent media.
final class CastlinePageChannel: ChannelPlugin {
    static let namespaces = ["urn:x-cast:net.castline.page"]
    private let host: PluginHostServices

    init(host: PluginHostServices, config: String, session: String) throws(PluginError) {
        self.host = host
    }

    func command(id: UInt64, json: String) {
        DashCastChannel.sendPage(id: id, json: json, host: host, namespace: Self.namespaces[0], app: "the castline receiver",
                                 logClass: "CastlinePageChannel")
    }

    func didReceive(namespace: String, source: String, payload: String) {
        host.log(.debug, class: "CastlinePageChannel", "the castline receiver said something", fields: ["payload": .string(String(payload.prefix(200)))])
    }

    func close() {}
}
