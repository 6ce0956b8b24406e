import CastCore
import CastLogging

/// Everything that can be asked of the hub: what the HTTP API's routes, the CLI's commands and
/// MQTT's `…/set` topics map to, one to one. The route table (``ControlAction/routes``) decodes
/// requests into these, checking every argument (``ControlError`` usage errors), so nothing
/// malformed reaches a device; ``ControlPlane`` runs them.
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
    case sync(SyncArguments)
    case listWalls
    case stopWall(String)
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

    /// `PUT /v1/logging`: `{"rules": "…"}` (null removes the API's layer).
    package static func setLogging(body: JSONValue) throws(ControlError) -> ControlCommand {
        let args = try ArgumentObject(body, action: .setLogging)
        guard case .object(let object) = body, object["rules"] != nil else {
            throw ControlError.usage("missing_rules", "logging needs \"rules\": a rule string such as \"info,CastSession:debug\", or null")
        }
        guard let rules = try args.string("rules") else { return .setLogging(nil) }
        do { _ = try LogRuleParser.parse(rules) } catch {
            throw ControlError.usage("bad_log_rules", "log rules: column \(error.column): \(error.reason)")
        }
        return .setLogging(rules)
    }

    /// The action this command is, whose row in the route table names and decodes it.
    package var action: ControlAction {
        switch self {
        case .status: return .status
        case .listDevices: return .listDevices
        case .showDevice: return .showDevice
        case .cast: return .cast
        case .play: return .play
        case .pause: return .pause
        case .stop: return .stop
        case .seek: return .seek
        case .volume: return .volume
        case .mute: return .mute
        case .queue: return .queue
        case .channel: return .channel
        case .site: return .site
        case .announce: return .announce
        case .sync: return .sync
        case .listWalls: return .listWalls
        case .stopWall: return .stopWall
        case .listPlugins: return .listPlugins
        case .listJobs: return .listJobs
        case .showJob: return .showJob
        case .putJob: return .putJob
        case .deleteJob: return .deleteJob
        case .runJob: return .runJob
        case .showLogging: return .showLogging
        case .setLogging: return .setLogging
        case .explainLogging: return .explainLogging
        }
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
        let args = try ArgumentObject(json, action: .channel)
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
