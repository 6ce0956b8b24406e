import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// Channel `home-assistant` on `urn:x-cast:com.nabucasa.hast`: shows a Home Assistant dashboard
/// with Home Assistant Cast (app `A078F6B0`), as pychromecast's `HomeAssistantController` does.
///
/// Config (`plugins.config.web-pages`): `{"home_assistant": {"url": "https://ha.example:8123",
/// "uuid": "…", "client_id": "…", "token_file": "/etc/castline/ha-refresh-token"}}`. The token
/// file holds a refresh token; it must not be readable by others, is read at each connect, and
/// the token is never logged (castline's traffic log and the simulator's frame log redact
/// `refreshToken`).
///
/// command `{"view_path": "lobby", "url_path": "signage"}` → `connect` (unless the receiver is
/// already connected to this instance) → `show_lovelace_view` → completes with the receiver's
/// `receiver_status`; a `receiver_error` fails the command with its meaning.
final class HomeAssistantChannel: ChannelPlugin {
    static let namespaces = ["urn:x-cast:com.nabucasa.hast"]
    private let host: PluginHostServices
    private let settings: Settings?
    private let settingsProblem: String?
    /// The command under way and what it waits for.
    private var pending: (command: UInt64, view: JSONValue, step: Step)?
    private var connected = false

    enum Step { case connecting, showing }

    struct Settings {
        var url: String
        var uuid: String
        var clientID: String?
        var tokenFile: String
    }

    init(host: PluginHostServices, config: String, session: String) throws(PluginError) {
        self.host = host
        let options = try JSONValue.parsePluginInput(config.isEmpty ? "{}" : config)
        do {
            settings = try Self.settings(options["home_assistant"])
            settingsProblem = nil
        } catch {
            settings = nil
            settingsProblem = error.reason
        }
    }

    static func settings(_ value: JSONValue?) throws(PluginError) -> Settings {
        let hint = "plugins.config.web-pages.home_assistant needs url (https), uuid and token_file"
        guard let value, let url = value["url"]?.string, let uuid = value["uuid"]?.string,
              let tokenFile = value["token_file"]?.string else { throw PluginError(hint) }
        guard url.lowercased().hasPrefix("https://") else { throw PluginError("home_assistant.url must be https (Home Assistant Cast refuses http): \(url)") }
        return Settings(url: url, uuid: uuid, clientID: value["client_id"]?.string, tokenFile: tokenFile)
    }

    func command(id: UInt64, json: String) {
        guard let settings else {
            host.fail(command: id, reason: settingsProblem ?? "no home_assistant settings")
            return
        }
        guard pending == nil else {
            host.fail(command: id, reason: "a dashboard is being shown on this device already; try again when it answered")
            return
        }
        let view: JSONValue
        do { view = try JSONValue.parsePluginInput(json) } catch {
            host.fail(command: id, reason: error.reason)
            return
        }
        if connected {
            pending = (id, view, .showing)
            show(view, settings)
            return
        }
        let token: String
        do { token = try Self.readToken(settings.tokenFile) } catch {
            host.fail(command: id, reason: error.reason)
            return
        }
        pending = (id, view, .connecting)
        var connect: JSONObject = ["type": "connect", "refreshToken": .string(token), "hassUrl": .string(settings.url),
                                   "hassUUID": .string(settings.uuid)]
        connect.set("clientId", settings.clientID.map { .string($0) } ?? .null)
        host.log(.info, class: "HomeAssistantChannel", "connecting Home Assistant Cast to \(settings.url)")
        send(.object(connect))
    }

    private func show(_ view: JSONValue, _ settings: Settings) {
        send(["type": "show_lovelace_view", "hassUrl": .string(settings.url), "hassUUID": .string(settings.uuid),
              "viewPath": view["view_path"] ?? .null, "urlPath": view["url_path"] ?? .null])
    }

    private func send(_ message: JSONValue) {
        let rc = host.send(namespace: Self.namespaces[0], payload: message.serialized())
        if rc != 0, let waiting = pending {
            pending = nil
            host.fail(command: waiting.command, reason: "the host could not send to Home Assistant Cast (status \(rc))")
        }
    }

    func didReceive(namespace: String, source: String, payload: String) {
        guard let message = try? JSONValue.parse(payload), let settings else { return }
        switch message["type"]?.string {
        case "receiver_status":
            connected = message["connected"]?.bool == true && message["hassUrl"]?.string == settings.url
            guard let waiting = pending else { return }
            switch waiting.step {
            case .connecting where connected:
                pending = (waiting.command, waiting.view, .showing)
                show(waiting.view, settings)
            case .connecting:
                pending = nil
                host.fail(command: waiting.command, reason: "Home Assistant Cast did not connect to \(settings.url)")
            case .showing:
                pending = nil
                host.complete(command: waiting.command, json: message.serialized())
            }
        case "receiver_error":
            let code = message["error_code"]?.int ?? 0
            if code == 20 || code == 21 { connected = false }
            guard let waiting = pending else { return }
            pending = nil
            host.fail(command: waiting.command, reason: "Home Assistant Cast: \(Self.meaning(code)) (receiver_error \(code))")
        default:
            break
        }
    }

    /// Home Assistant Cast's error codes, as its frontend names them.
    static func meaning(_ code: Int64) -> String {
        switch code {
        case 1: return "cannot connect to Home Assistant"
        case 2: return "authentication failed (is the refresh token valid?)"
        case 3: return "the connection to Home Assistant was lost"
        case 4: return "no Home Assistant URL"
        case 5: return "the Home Assistant URL is not https"
        case 20: return "the receiver is connected to another Home Assistant instance"
        case 21: return "the receiver is not connected"
        case 22: return "fetching the dashboard's config failed (does the view exist?)"
        default: return "error"
        }
    }

    /// The refresh token from `path`: one line, not readable by others.
    static func readToken(_ path: String) throws(PluginError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw PluginError("cannot read the token file \(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & 0o077 == 0 else {
            throw PluginError("the token file \(path) can be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PluginError("cannot open the token file \(path): \(String(cString: strerror(errno)))") }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 65_536 {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        let token = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !token.isEmpty else { throw PluginError("the token file \(path) is empty") }
        return token
    }

    func close() {
        if let waiting = pending { host.fail(command: waiting.command, reason: "the channel closed") }
        pending = nil
    }
}
