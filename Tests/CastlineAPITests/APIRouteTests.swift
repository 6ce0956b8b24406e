import CastCore
@testable import CastlineAPI
import CastlineDaemon
import MQTTBridgeCore
import NIOHTTP1
import Testing

/// The route table as the HTTP API resolves it, without a server (as HummingbirdTesting's router
/// mode does): every row's route matches and gives its parameters, unknown paths and methods get
/// their errors, and a malformed body is refused naming the field.
@Suite struct APIRouteTests {
    /// A body each action decodes (an action not listed is tried with none).
    static let samples: [ControlAction: String] = [
        .cast: #"{"media": "http://nas.local/a.mp4"}"#, .site: #"{"url": "http://dash.local/"}"#,
        .announce: #"{"media": "http://nas.local/chime.mp3"}"#, .seek: #"{"position": 90}"#, .volume: #"{"level": 40}"#,
        .queue: #"{"action": "next"}"#, .channel: #"{"message": {"type": "HI"}}"#,
        .putJob: #"{"devices": ["Lobby*"], "media": "http://nas.local/a.mp4"}"#, .setLogging: #"{"rules": "info"}"#,
        .sync: #"{"devices": "Wall*", "media": "http://nas.local/a.mp4"}"#,
    ]
    /// What each path parameter is given: spaces and colons, percent-encoded in the target.
    static let parameters = ["device": "Living Room TV", "namespace": "urn:x-cast:com.example", "name": "lobby", "wall": "lobby wall"]

    static func target(_ route: ControlRoute) -> String {
        var path = route.path
        for (name, value) in parameters { path = path.replacing("{\(name)}", with: CommandTranslator.percentEncoded(value)) }
        return path + (route.action == .explainLogging ? "?class=CastSession&function=run" : "")
    }

    static func resolve(_ method: HTTPMethod, _ target: String, _ body: String = "") -> Result<RouteTarget, APIRoute.Failure> {
        APIRoute.resolve(method: method, target: target, body: Array(body.utf8))
    }

    @Test(arguments: ControlAction.table.indices)
    func everyRowsRouteMatchesAndGivesItsParameters(_ index: Int) throws {
        let route = ControlAction.table[index]
        let result = Self.resolve(HTTPMethod(rawValue: route.method.rawValue), Self.target(route), Self.samples[route.action] ?? "")
        let resolved = try result.get()
        switch resolved {
        case .command(let command):
            #expect(command.action == route.action, "\(route.method) \(route.path)")
            if route.parameterNames.contains("device") { #expect(command.device == "Living Room TV") }
            switch command {
            case .channel(_, let namespace, _): #expect(namespace == "urn:x-cast:com.example")
            case .showJob(let name), .putJob(let name, _), .deleteJob(let name), .runJob(let name, _): #expect(name == "lobby")
            case .explainLogging(let className, let function): #expect(className == "CastSession" && function == "run")
            case .stopWall(let name): #expect(name == "lobby wall")
            default: break
            }
        case .events: #expect(route.action == .events)
        case .metrics: #expect(route.action == .metrics)
        }
    }

    @Test func rowsDecodeToTheCommandsTheyStandFor() throws {
        let device = "/v1/devices/Kitchen"
        let cases: [(HTTPMethod, String, String, RouteTarget)] = [
            (.GET, "/v1", "", .command(.status)),
            (.GET, "/v1/status", "", .command(.status)),
            (.GET, "/v1/devices/Lobby%20TV", "", .command(.showDevice("Lobby TV"))),
            (.POST, "\(device)/stop", #"{"app": true}"#, .command(.stop("Kitchen", app: true))),
            (.POST, "\(device)/stop", "", .command(.stop("Kitchen", app: false))),
            (.POST, "\(device)/volume", #"{"level": "+10", "stream": true}"#,
             .command(.volume("Kitchen", try ControlArguments.volume("+10"), stream: true))),
            (.POST, "\(device)/mute", #"{"off": true}"#, .command(.mute("Kitchen", false, stream: false))),
            (.POST, "\(device)/seek", #"{"position": "-10"}"#, .command(.seek("Kitchen", try ControlArguments.seek("-10")))),
            (.POST, "\(device)/queue", #"{"action": "repeat", "mode": "all"}"#, .command(.queue("Kitchen", .repeatMode(.all)))),
            (.POST, "\(device)/queue", #"{"action": "remove", "items": [3, 4]}"#, .command(.queue("Kitchen", .remove(items: [3, 4])))),
            (.POST, "/v1/jobs/bell/run", #"{"wait": false}"#, .command(.runJob("bell", wait: false))),
            (.PUT, "/v1/logging", #"{"rules": null}"#, .command(.setLogging(nil))),
            (.GET, "/v1/events?kinds=media,session", "", .events([.media, .session])),
            (.GET, "/v1/events", "", .events(nil)),
            (.GET, "/metrics", "", .metrics),
        ]
        for (method, target, body, expected) in cases {
            #expect(try Self.resolve(method, target, body).get() == expected, "\(method) \(target)")
        }
    }

    @Test func unknownRoutesAndMethodsGetTheirErrors() {
        let cases: [(HTTPMethod, String, Int, String, [HTTPMethod])] = [
            (.GET, "/v2/devices", 404, "unknown_route", []),
            (.GET, "/v1/devices/", 404, "unknown_route", []),
            (.GET, "/v1/jobs/x/other", 404, "unknown_route", []),
            (.POST, "/v1/devices/x/dance", 404, "unknown_action", []),
            (.GET, "/v1/devices/x/dance", 405, "method_not_allowed", [.POST]),
            (.DELETE, "/v1/devices", 405, "method_not_allowed", [.GET]),
            (.GET, "/v1/devices/x/cast", 405, "method_not_allowed", [.POST]),
            (.PATCH, "/v1/jobs/x", 405, "method_not_allowed", [.GET, .PUT, .DELETE]),
            (.POST, "/v1/logging", 405, "method_not_allowed", [.GET, .PUT]),
            (.GET, "/v1/devices/%ZZ", 400, "bad_path", []),
            (.GET, "/v1/logging/explain", 400, "missing_class", []),
            (.GET, "/v1/events?kinds=media,weather", 400, "bad_kind", []),
        ]
        for (method, target, status, code, allow) in cases {
            guard case .failure(let failure) = Self.resolve(method, target) else {
                Issue.record("\(method) \(target) resolved")
                continue
            }
            #expect(failure.error.httpStatus == status && failure.error.code == code && failure.allow == allow, "\(method) \(target): \(failure)")
        }
        // The unknown action's message lists the table's device actions.
        if case .failure(let failure) = Self.resolve(.POST, "/v1/devices/x/dance") {
            for route in ControlAction.deviceActions { #expect(failure.error.message.contains(route.name)) }
        }
    }

    /// Every row that takes a JSON object: an unknown key is refused naming it (and the field
    /// meant), `null` and wrong types name the field, and what is not an object is refused.
    @Test(arguments: ControlAction.table.filter { if case .object = $0.body { true } else { false } }.map(\.operationID))
    func malformedBodiesGetErrorsNamingTheField(_ operationID: String) throws {
        let route = try #require(ControlAction.table.first { $0.operationID == operationID })
        let method = HTTPMethod(rawValue: route.method.rawValue), target = Self.target(route)
        func failure(_ body: String) -> ControlError? {
            if case .failure(let failure) = Self.resolve(method, target, body) { return failure.error }
            return nil
        }
        let unknown = failure(#"{"colour": 1}"#)
        #expect(unknown?.code == "unknown_key" && unknown?.message.contains("\"colour\"") == true, "\(String(describing: unknown))")
        let first = route.body.fields[0].name
        let typo = failure("{\"\(first)x\": 1}")
        #expect(typo?.message.contains("did you mean \"\(first)\"") == true, "\(String(describing: typo))")
        #expect(failure("{not json")?.code == "bad_json")
        #expect(failure("[1]")?.code == "body_not_object")
        for field in route.body.fields where !field.nullable {
            let null = failure("{\"\(field.name)\": null}")
            #expect(null?.code == "bad_type" && null?.message.contains("\"\(field.name)\"") == true, "\(field.name): \(String(describing: null))")
        }
        // A boolean given as text, next to what the row needs besides.
        for field in route.body.fields where field.schema.hasPrefix("type: boolean") {
            var body = try JSONValue.parse(Self.samples[route.action] ?? "{}").object ?? JSONObject()
            body.set(field.name, "yes")
            let wrong = failure(JSONValue.object(body).serialized())
            #expect(wrong?.code == "bad_type" && wrong?.message.contains("\"\(field.name)\"") == true, "\(field.name): \(String(describing: wrong))")
        }
        // A required field left out: the error names it (a body of variants says which it lacks first).
        guard case .object(let object) = route.body, object.variants.isEmpty else { return }
        for field in route.body.fields where field.required {
            let missing = failure("{}")
            #expect(missing?.message.contains("\"\(field.name)\"") == true, "\(field.name): \(String(describing: missing))")
        }
    }

    /// Decoding follows the table: every key a row declares is taken (never `unknown_key`), so a
    /// field added to a row and not to its decoder, or the other way round, fails here.
    @Test(arguments: ControlAction.table.indices)
    func everyDeclaredFieldIsAKeyTheDecoderTakes(_ index: Int) {
        let route = ControlAction.table[index]
        let method = HTTPMethod(rawValue: route.method.rawValue)
        for field in route.body.fields {
            let body = "{\"\(field.name)\": 12345}"
            if case .failure(let failure) = Self.resolve(method, Self.target(route), body) {
                #expect(failure.error.code != "unknown_key", "\(route.path): \(field.name): \(failure.error)")
            }
        }
    }
}
