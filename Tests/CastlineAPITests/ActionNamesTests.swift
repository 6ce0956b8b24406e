import CastCore
@testable import CastlineAPI
import CastlineDaemon
import MQTTBridgeCore
import Testing

/// The names other faces give actions, held to the route table. The MQTT bridge is a plugin and
/// meets the host only at the C ABI, so it cannot read the table: these tests fail when its
/// command names, the requests it makes of them, or Home Assistant's command payloads leave the
/// table. The argument types' encoders (what the CLI sends) are held to it here too.
@Suite struct ActionNamesTests {
    /// MQTT's device commands are the table's device actions, the channel route, and `job`
    /// (the bridge's own: a GET then a PUT of the job).
    @Test func mqttsDeviceCommandsAreTheTablesActions() {
        let table = ControlAction.deviceActions.map(\.name) + [ControlAction.channel.name]
        #expect(Set(CommandTranslator.deviceCommands) == Set(table + ["job"]))
    }

    /// Each MQTT device command becomes a request the API routes to the action of its name.
    @Test(arguments: ControlAction.deviceActions.map(\.name) + ["channel"])
    func eachMQTTCommandBecomesARequestForItsAction(_ name: String) throws {
        var command = try JSONValue.parse(APIRouteTests.samples[ControlAction(rawValue: name)!] ?? "{}").object ?? JSONObject()
        command.set("command", .string(name))
        if name == "channel" { command.set("namespace", "urn:x-cast:com.example") }
        guard case .request(let request) = try CommandTranslator.device("Living Room TV", command).get() else {
            Issue.record("\(name): not one request")
            return
        }
        let routed = try resolve(request)
        #expect(routed.action.name == name)
        #expect(routed.device == "Living Room TV")
    }

    /// Home Assistant's buttons, switches, numbers and texts send commands whose names and keys
    /// the table has (a template's `{{ value }}` given a sample).
    @Test func homeAssistantsCommandsAreTheTablesActionsAndFields() throws {
        let entities = HomeAssistantDiscovery.entities(scheme: TopicScheme(base: "castline", agent: "a", discoveryPrefix: "homeassistant"), deviceID: "d", topicID: "d",
                                                       name: "TV", model: nil, jobs: ["lobby"])
        var checked = 0
        for entity in entities {
            for key in ["payload_press", "payload_on", "payload_off", "command_template"] {
                guard let text = entity.payload[key]?.string, text.hasPrefix("{") else { continue }
                let payload = text.replacing("{{ value | tojson }}", with: "\"http://nas.local/a.mp4\"").replacing("{{ value | int }}", with: "40")
                let (_, object, refusal) = CommandTranslator.parse(Array(payload.utf8), now: 0)
                #expect(refusal == nil, "\(payload)")
                guard let object, object["command"]?.string != "job" else { continue }
                guard case .request(let request) = try CommandTranslator.device("TV", object).get() else { continue }
                #expect(try resolve(request).action.name == object["command"]?.string, "\(payload)")
                checked += 1
            }
        }
        #expect(checked >= 9)
    }

    /// What `castline cast` and `castline announce` send is what the rows decode, and decodes back.
    @Test func theArgumentEncodersUseTheTablesFields() throws {
        var cast = CastArguments(media: "http://nas.local/a.mp4")
        (cast.title, cast.subtitle, cast.studio, cast.image) = ("T", "S", "St", "http://nas.local/i.png")
        (cast.contentType, cast.streamType, cast.app, cast.start) = ("video/mp4", .live, "CC1AD845", 5)
        (cast.noAutoplay, cast.dryRun, cast.subtitles, cast.playTimeout) = (true, true, "auto", 60)
        (cast.queue, cast.repeatMode) = (["http://nas.local/b.mp4"], "all")
        #expect(Set(cast.json.object!.keys) == Set(ControlAction.cast.route.body.fieldNames), "every cast field is sent when set")
        #expect(try CastArguments(json: cast.json) == cast)
        var announce = AnnounceArguments(media: "http://nas.local/chime.mp3")
        (announce.volume, announce.contentType, announce.timeout, announce.wait) = (60, "audio/mpeg", 30, false)
        #expect(Set(announce.json.object!.keys) == Set(ControlAction.announce.route.body.fieldNames))
        #expect(try AnnounceArguments(json: announce.json) == announce)
    }

    /// The command an in-process request (the bridge's) resolves to.
    func resolve(_ request: JSONValue) throws -> ControlCommand {
        let body = request["body"].map { Array($0.serialized().utf8) } ?? []
        let result = APIRoute.resolve(method: .init(rawValue: request["method"]!.string!), target: request["path"]!.string!, body: body)
        guard case .command(let command) = try result.get() else { throw APIRoute.Failure(error: .usage("not_a_command", "")) }
        return command
    }
}
