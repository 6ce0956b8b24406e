import CastCore
import CastLogging

/// Everything that can be asked of the hub: what the HTTP API's routes, the CLI's commands and
/// MQTT's `…/set` topics map to, one to one. Decoding checks every argument (``ControlError``
/// usage errors), so nothing malformed reaches a device.
package enum ControlCommand: Sendable, Equatable {
    case status
    case listDevices
    case showDevice(String)
    case cast(String, CastArguments)
    case play(String)
    case pause(String)
    /// `app`: stop the receiver app, not only the media.
    case stop(String, app: Bool)
    case seek(String, ControlArguments.Seek)
    case volume(String, ControlArguments.Volume, stream: Bool)
    case mute(String, Bool, stream: Bool)
    case queue(String, ControlArguments.Queue)
    case channel(String, namespace: String, ChannelArguments)
    /// A web page (DashCast) or a Home Assistant dashboard on the device.
    case site(String, SiteArguments)
    /// An announcement that gives back what was playing.
    case announce(String, AnnounceArguments)
    case listPlugins
    case listJobs
    case showJob(String)
    /// The job's name and its definition as text (JSON or YAML, checked like a config job).
    case putJob(String, String)
    case deleteJob(String)
    /// Plays an announce job's announcement now on its devices (`wait`: answer once each is restored).
    case runJob(String, wait: Bool)
    case showLogging
    /// nil removes the API's layer of rules.
    case setLogging(String?)
    case explainLogging(className: String, function: String)

    /// The device actions (`POST /v1/devices/{device}/{action}`, MQTT `{"command": action, …}`).
    package static let deviceActions = ["cast", "site", "announce", "play", "pause", "stop", "seek", "volume", "mute", "queue"]

    /// A device action with its body. `device` is an id or a name.
    package static func device(_ device: String, action: String, body: JSONValue) throws(ControlError) -> ControlCommand {
        switch action {
        case "cast":
            return .cast(device, try CastArguments(json: body))
        case "site":
            return .site(device, try SiteArguments(json: body))
        case "announce":
            return .announce(device, try AnnounceArguments(json: body))
        case "play", "pause":
            _ = try ArgumentObject(body, allowed: [], what: action)
            return action == "play" ? .play(device) : .pause(device)
        case "stop":
            let args = try ArgumentObject(body, allowed: ["app"], what: "stop")
            return .stop(device, app: try args.bool("app") ?? false)
        case "seek":
            let args = try ArgumentObject(body, allowed: ["position"], what: "seek")
            return .seek(device, try ControlArguments.seek(args.value("position")))
        case "volume":
            let args = try ArgumentObject(body, allowed: ["level", "stream"], what: "volume")
            return .volume(device, try ControlArguments.volume(args.value("level")), stream: try args.bool("stream") ?? false)
        case "mute":
            let args = try ArgumentObject(body, allowed: ["muted", "off", "stream"], what: "mute")
            var muted = try args.bool("muted") ?? true
            if try args.bool("off") == true { muted = false }
            return .mute(device, muted, stream: try args.bool("stream") ?? false)
        case "queue":
            let args = try ArgumentObject(body, allowed: ["action", "items", "mode"], what: "queue")
            guard let name = try args.string("action") else {
                throw ControlError.usage("bad_queue", "queue needs \"action\": next, prev, jump, remove or repeat")
            }
            var values = try args.strings("items") ?? []
            if let mode = try args.string("mode") { values = [mode] }
            return .queue(device, try ControlArguments.queue(action: name, values: values))
        default:
            throw ControlError(.notFound, "unknown_action", "no device action \"\(action)\" (\(deviceActions.joined(separator: ", ")), channels/NAMESPACE)")
        }
    }

    /// `PUT /v1/logging`: `{"rules": "…"}` (null removes the API's layer).
    package static func setLogging(body: JSONValue) throws(ControlError) -> ControlCommand {
        let args = try ArgumentObject(body, allowed: ["rules"], nullable: ["rules"], what: "logging")
        guard case .object(let object) = body, object["rules"] != nil else {
            throw ControlError.usage("missing_rules", "logging needs \"rules\": a rule string such as \"info,CastSession:debug\", or null")
        }
        guard let rules = try args.string("rules") else { return .setLogging(nil) }
        do { _ = try LogRuleParser.parse(rules) } catch {
            throw ControlError.usage("bad_log_rules", "log rules: column \(error.column): \(error.reason)")
        }
        return .setLogging(rules)
    }

    /// The device the command acts on, if any (for logs and per-device limits).
    package var device: String? {
        switch self {
        case .showDevice(let d), .cast(let d, _), .play(let d), .pause(let d), .stop(let d, _), .seek(let d, _), .volume(let d, _, _),
             .mute(let d, _, _), .queue(let d, _), .channel(let d, _, _), .site(let d, _), .announce(let d, _):
            return d
        default:
            return nil
        }
    }
}

/// A message to a custom namespace (`POST /v1/devices/{device}/channels/{namespace}`): `message`
/// (a JSON object or a string) is sent; with `wait`, it is a request whose reply (matched by
/// `requestId`, or the channel plugin's own answer) comes back within `timeout` seconds. `app`:
/// the receiver app to launch first when it does not run (the custom app the namespace belongs to).
/// `listen` (with no message): open the namespace so the app's messages become `channel` events.
package struct ChannelArguments: Sendable, Equatable {
    package var message: JSONValue?
    package var wait: Bool
    package var timeout: Double
    package var app: String?
    package var listen: Bool

    package init(json: JSONValue) throws(ControlError) {
        let args = try ArgumentObject(json, allowed: ["message", "wait", "timeout", "app", "listen"], what: "channel")
        listen = try args.bool("listen") ?? false
        if let app = try args.string("app") {
            guard !app.isEmpty, app.utf8.count <= 32, app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw ControlError.usage("bad_app", "channel: \"app\" must be an app id such as CC1AD845, not \"\(app)\"")
            }
            self.app = app
        }
        message = args.value("message")
        switch message {
        case .object?, .string?: break
        case nil where listen: break
        case nil: throw ControlError.usage("missing_message", "channel needs \"message\": a JSON object or a string (or \"listen\": true)")
        default: throw ControlError.usage("bad_message", "channel: \"message\" must be a JSON object or a string")
        }
        wait = try args.bool("wait") ?? false
        timeout = try args.number("timeout") ?? 10
        guard timeout > 0, timeout <= 300 else { throw ControlError.usage("bad_timeout", "channel: \"timeout\" must be 0-300 seconds") }
    }
}
