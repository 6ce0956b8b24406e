import CastJSON
import Foundation
import MQTTBridgeCore
import Testing

/// Every discovery payload against the committed table of HA's keys
/// (Tests/Fixtures/home-assistant/mqtt-discovery-keys.json, transcribed from HA's pages).
@Suite struct HomeAssistantSchemaTests {
    let scheme = TopicScheme(base: "castline", agent: "site-1", discoveryPrefix: "homeassistant")

    static let table: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/home-assistant/mqtt-discovery-keys.json")
        return try! JSONValue.parse(String(contentsOf: url, encoding: .utf8))
    }()

    /// The table's complaints about one payload: missing, unknown and deprecated keys, bad values.
    static func problems(component: String, _ payload: JSONValue) -> [String] {
        guard let rules = table["components"]?[component], let object = payload.object else { return ["no rules for \(component)"] }
        let common = table["common"]!
        let noCommon = rules["no_common"]?.bool == true
        var allowed = Set((rules["allowed"]?.array ?? []).compactMap(\.string))
        if !noCommon { allowed.formUnion((common["allowed"]?.array ?? []).compactMap(\.string)) }
        var out: [String] = []
        for key in (rules["required"]?.array ?? []).compactMap(\.string) where object[key] == nil { out.append("missing \(key)") }
        for key in object.keys where !allowed.contains(key) { out.append("unknown \(key)") }
        for key in (common["deprecated"]?.array ?? []).compactMap(\.string) where object[key] != nil { out.append("deprecated \(key)") }
        for values in [common["values"], rules["values"]] {
            for key in values?.object?.keys ?? [] {
                if let value = object[key], !(values![key]!.array ?? []).contains(value) { out.append("bad \(key): \(value.serialized())") }
            }
        }
        for pair in common["exclusive"]?.array ?? [] {
            let keys = (pair.array ?? []).compactMap(\.string)
            if keys.allSatisfy({ object[$0] != nil }) { out.append("both \(keys)") }
        }
        if let id = object["default_entity_id"]?.string {
            let parts = id.split(separator: ".", maxSplits: 1)
            if parts.count != 2 || parts[0] != component || !parts[1].allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "_" }) {
                out.append("bad default_entity_id \(id)")
            }
        }
        if let device = object["device"]?.object {
            let rules = common["device"]!
            let allowedDevice = Set((rules["allowed"]?.array ?? []).compactMap(\.string))
            for key in device.keys where !allowedDevice.contains(key) { out.append("unknown device.\(key)") }
            if (rules["one_of_required"]?.array ?? []).compactMap(\.string).allSatisfy({ device[$0] == nil }) { out.append("device without identifiers") }
        }
        if let origin = object["origin"]?.object {
            let rules = common["origin"]!
            let allowedOrigin = Set((rules["allowed"]?.array ?? []).compactMap(\.string))
            for key in origin.keys where !allowedOrigin.contains(key) { out.append("unknown origin.\(key)") }
            for key in (rules["required"]?.array ?? []).compactMap(\.string) where origin[key] == nil { out.append("missing origin.\(key)") }
        }
        for item in object["availability"]?.array ?? [] {
            let rules = common["availability_item"]!
            let allowedItem = Set((rules["allowed"]?.array ?? []).compactMap(\.string))
            for key in item.object?.keys ?? [] where !allowedItem.contains(key) { out.append("unknown availability.\(key)") }
            if item["topic"] == nil { out.append("availability without topic") }
        }
        return out
    }

    var entities: [HomeAssistantDiscovery.Entity] {
        [HomeAssistantDiscovery.agent(scheme: scheme, version: "1.0.0")]
            + HomeAssistantDiscovery.entities(scheme: scheme, deviceID: "id/1", topicID: "id_1", name: "Lobby", model: "Chromecast Ultra",
                                              jobs: ["j"], version: "1.0.0")
    }

    @Test func everyPayloadPassesTheTable() {
        let withScreen = HomeAssistantDiscovery.entities(scheme: scheme, deviceID: "id/1", topicID: "id_1", name: "Lobby", model: "Chromecast",
                                                         jobs: [], version: "1.0.0", hasScreen: true)
        #expect(withScreen.count == entities.count, "one more entity, the screen's binary sensor, and no agent")
        let screen = withScreen.first { $0.topic.hasSuffix("/id_1_screen/config") }
        #expect(screen?.topic.hasPrefix("homeassistant/binary_sensor/") == true && screen?.payload["state_topic"] == "castline/site-1/device/id_1/state")
        #expect(screen?.payload["value_template"]?.string?.contains("'None' if v is none") == true)
        for e in entities + withScreen {
            let component = e.topic.split(separator: "/")[1]
            #expect(Self.problems(component: String(component), e.payload) == [], "\(e.topic)")
        }
    }

    @Test func theTableCatchesWhatTheOldPayloadsHad() {
        // The payload shape before issue 44: object_id, one availability_topic beside availability, a nameless via_device.
        let old: JSONValue = ["name": "State", "unique_id": "u", "object_id": "u", "availability_topic": "t", "availability": [["topic": "t"]],
                              "state_topic": "s", "device": ["name": "TV", "via_device": "castline_home", "suggested_area": "home", "model": "Cast device"],
                              "surprise": 1]
        let found = Self.problems(component: "sensor", old)
        #expect(found.contains("deprecated object_id") && found.contains("unknown object_id") && found.contains("unknown surprise"))
        #expect(found.contains(where: { $0.hasPrefix("both") }) && found.contains("device without identifiers"))
    }

    @Test func everyEntityIsOneDeviceReachedThroughANamedAgent() {
        let agent = HomeAssistantDiscovery.agent(scheme: scheme, version: "1.0.0").payload
        #expect(agent["device"]?["identifiers"] == ["castline_site-1"] && agent["device"]?["name"] == "castline site-1")
        let tv = Array(entities.dropFirst())
        #expect(tv.count == 18)
        #expect(Set(tv.compactMap { $0.payload["unique_id"]?.string }).count == tv.filter { $0.payload["unique_id"] != nil }.count)
        #expect(Set(tv.map(\.topic)).count == tv.count)
        for e in tv {
            let device = e.payload["device"]!
            #expect(device["identifiers"] == ["castline_site-1_id_1"])
            // via_device names the agent's device, which has a name; no area is made up.
            #expect(device["via_device"] == agent["device"]?["identifiers"]?[0])
            #expect(device["suggested_area"] == nil && device["model"] == "Chromecast Ultra")
            #expect(e.payload["origin"]?["name"] == "castline")
            if e.payload["automation_type"] == nil {
                #expect(e.payload["availability_mode"] == "all")
                #expect(e.payload["availability"] == [["topic": "castline/site-1/status"], ["topic": "castline/site-1/device/id_1/availability"]])
                #expect(e.payload["object_id"] == nil && e.payload["default_entity_id"]?.string?.hasSuffix("castline_site_1_id_1_\(e.topic.split(separator: "/")[3].dropFirst(5))") == true)
            }
        }
        // Without a model from the registry, no made-up one.
        let unknown = HomeAssistantDiscovery.entities(scheme: scheme, deviceID: "x", topicID: "x", name: "X", model: nil, jobs: [])
        #expect(unknown.allSatisfy { $0.payload["device"]?["model"] == nil })
    }

    @Test func theEntitiesTheIssueAsksFor() {
        let byKey = Dictionary(uniqueKeysWithValues: entities.dropFirst().map { e -> (String, JSONValue) in
            let parts = e.topic.split(separator: "/")
            return ("\(parts[1])/\(parts[3].dropFirst("id_1_".count))", e.payload)
        })
        for key in ["switch/mute", "sensor/position", "sensor/duration", "button/next", "button/previous", "sensor/app", "text/announce",
                    "sensor/last_error", "text/cast_url", "select/job", "number/volume", "device_automation/media_finished",
                    "device_automation/command_failed"] {
            #expect(byKey[key] != nil, "\(key)")
        }
        #expect(byKey["sensor/last_error"]?["state_topic"] == "castline/site-1/device/id_1/result")
        #expect(byKey["text/cast_url"]?["max"] == 2048)
        #expect(byKey["device_automation/media_finished"]?["topic"] == "castline/site-1/device/id_1/trigger")
        #expect(byKey["device_automation/media_finished"]?["payload"] == "media_finished")
        #expect(byKey["select/job"]?["options"] == ["none", "j"])
    }

    @Test func signalsFromStatesEventsAndResults() {
        #expect(DeviceSignals.availability(state: ["link": "connected"], unavailableAfter: 15) == .online)
        // Down for less than the bound: still online, looked at again when it has passed.
        #expect(DeviceSignals.availability(state: ["link": "reconnecting", "state": "UNKNOWN", "unreachableFor": 4], unavailableAfter: 15) == .onlineFor(11))
        #expect(DeviceSignals.availability(state: ["link": "reconnecting", "unreachableFor": 15], unavailableAfter: 15) == .offline)
        #expect(DeviceSignals.availability(state: ["link": "lost", "unreachableFor": 90], unavailableAfter: 15) == .offline)
        #expect(DeviceSignals.availability(state: ["link": "reconnecting", "unreachableFor": 0.2], unavailableAfter: 0) == .offline)
        // Never reached: no time to wait out.
        #expect(DeviceSignals.availability(state: ["link": "connecting"], unavailableAfter: 15) == .offline)
        #expect(DeviceSignals.availability(state: ["state": "IDLE"], unavailableAfter: 15) == nil)
        #expect(DeviceSignals.Availability.onlineFor(3).payload == "online" && DeviceSignals.Availability.offline.payload == "offline")
        let finished: JSONValue = ["kind": "media", "type": "IDLE", "device": "tv", "mediaStatus": ["playerState": "IDLE", "idleReason": "FINISHED"]]
        #expect(DeviceSignals.trigger(event: finished)?.payload == "media_finished" && DeviceSignals.trigger(event: finished)?.device == "tv")
        let stopped: JSONValue = ["kind": "media", "type": "IDLE", "device": "tv", "mediaStatus": ["idleReason": "CANCELLED"]]
        #expect(DeviceSignals.trigger(event: stopped) == nil)
        #expect(DeviceSignals.trigger(result: ["ok": false, "error": ["code": "bad_json"]]) == "command_failed")
        #expect(DeviceSignals.trigger(result: ["ok": true]) == nil)
        #expect(scheme.device(ofResult: "castline/site-1/device/id_1/result") == "id_1")
        #expect(scheme.device(ofResult: "castline/site-1/job/j/result") == nil)
        #expect(scheme.device(ofResult: "castline/site-2/device/id_1/result") == nil)
    }
}
