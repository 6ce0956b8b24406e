import CastJSON

/// Home Assistant MQTT discovery, to HA's current schema (the keys each component takes are in
/// Tests/Fixtures/home-assistant/mqtt-discovery-keys.json, with the pages they come from).
///
/// The agent is an HA device of its own (`castline_<agent>`, named, with a connectivity sensor
/// on its status topic); each TV is a device (`castline_<agent>_<id>`) reached through it
/// (`via_device`), with its model from castline's registry. Every TV entity is available only
/// while both the agent and the TV are (`availability_mode: all`: the agent's status topic and the
/// TV's own `…/availability`). Commands go to the TV's `set` topic as the bridge's JSON commands;
/// every value a user types reaches the JSON through `tojson` (quotes and backslashes escaped).
/// Two device triggers (media finished, command failed) fire from `…/trigger`.
package enum HomeAssistantDiscovery {
    /// One retained config message.
    package struct Entity: Equatable {
        package let topic: String
        package let payload: JSONValue
    }

    /// The longest URL the text entities take (HA's default is 255, its entity-state limit).
    package static let maxURLLength = 2_048
    /// The payloads `…/trigger` carries.
    package static let triggers = ["media_finished", "command_failed"]

    /// Who published the discovery messages (HA logs it with each).
    package static func origin(version: String) -> JSONValue { ["name": "castline", "sw_version": .string(version)] }

    /// The agent's own HA device: a named device the TVs' `via_device` points at, with one
    /// connectivity sensor on the agent's status topic.
    package static func agent(scheme: TopicScheme, version: String) -> Entity {
        let node = TopicScheme.discoveryID("castline_\(scheme.agent)")
        let payload: JSONObject = [
            "name": "Agent", "unique_id": .string("\(node)_agent"), "default_entity_id": .string("binary_sensor.\(entitySlug(node))_agent"),
            "state_topic": .string(scheme.status), "payload_on": "online", "payload_off": "offline", "device_class": "connectivity",
            "entity_category": "diagnostic", "qos": 1, "origin": origin(version: version),
            "device": ["identifiers": [.string(node)], "name": .string("castline \(scheme.agent)"), "manufacturer": "castline",
                       "model": "castline agent", "sw_version": .string(version)],
        ]
        return Entity(topic: "\(scheme.discoveryPrefix)/binary_sensor/\(node)/agent/config", payload: .object(payload))
    }

    /// `hasScreen`: the device has a screen (its state carries `screen`): a binary sensor says
    /// whether it shows the app, `None` (unknown) where castline cannot tell.
    package static func entities(scheme: TopicScheme, deviceID: String, topicID: String, name: String, model: String?, jobs: [String],
                                 version: String = "1.0.0", hasScreen: Bool = false) -> [Entity] {
        let node = TopicScheme.discoveryID("castline_\(scheme.agent)")
        let object = TopicScheme.discoveryID(topicID)
        let deviceKey = "\(node)_\(object)"
        var device: JSONObject = ["identifiers": [.string(deviceKey)], "name": .string(name), "manufacturer": "castline",
                                  "via_device": .string(node)]
        if let model, !model.isEmpty { device.set("model", .string(model)) }
        let state = scheme.deviceState(topicID), set = scheme.deviceSet(topicID)
        let availability: JSONValue = [["topic": .string(scheme.status)], ["topic": .string(scheme.deviceAvailability(topicID))]]
        func entity(_ component: String, _ suffix: String, _ title: String, _ extra: JSONObject) -> Entity {
            var o: JSONObject = ["name": .string(title), "unique_id": .string("\(deviceKey)_\(suffix)"),
                                 "default_entity_id": .string("\(component).\(entitySlug(deviceKey))_\(suffix)"),
                                 "availability": availability, "availability_mode": "all",
                                 "device": .object(device), "origin": origin(version: version), "qos": 1]
            for key in extra.keys { o.set(key, extra[key]!) }
            return Entity(topic: "\(scheme.discoveryPrefix)/\(component)/\(node)/\(object)_\(suffix)/config", payload: .object(o))
        }
        func button(_ suffix: String, _ title: String, _ command: String, _ icon: String) -> Entity {
            entity("button", suffix, title, ["command_topic": .string(set), "payload_press": .string(command), "icon": .string(icon)])
        }
        func sensor(_ suffix: String, _ title: String, _ template: String, _ extra: JSONObject) -> Entity {
            var o: JSONObject = ["state_topic": .string(state), "value_template": .string(template)]
            for key in extra.keys { o.set(key, extra[key]!) }
            return entity("sensor", suffix, title, o)
        }
        func trigger(_ type: String) -> Entity {
            let payload: JSONObject = ["automation_type": "trigger", "topic": .string(scheme.deviceTrigger(topicID)), "type": .string(type),
                                       "subtype": "tv", "payload": .string(type), "qos": 1, "device": .object(device),
                                       "origin": origin(version: version)]
            return Entity(topic: "\(scheme.discoveryPrefix)/device_automation/\(node)/\(object)_\(type)/config", payload: .object(payload))
        }
        let screen = entity("binary_sensor", "screen", "Screen shows app", [
            "state_topic": .string(state), "payload_on": "ON", "payload_off": "OFF",
            // `None` is the MQTT binary sensor's unknown: castline cannot tell (no CEC fields, no link).
            "value_template": "{% set v = (value_json.screen | default({})).visible | default(none) %}{{ 'None' if v is none else ('ON' if v else 'OFF') }}",
            "icon": "mdi:television-play"])
        return (hasScreen ? [screen] : []) + [
            sensor("state", "State", "{{ value_json.state }}", ["json_attributes_topic": .string(state), "icon": "mdi:cast"]),
            sensor("title", "Title", "{{ value_json.title | default('') }}", ["icon": "mdi:movie-open"]),
            sensor("app", "App", "{{ value_json.app | default('none') }}", ["icon": "mdi:application"]),
            // "None" is the MQTT sensor's word for unknown: nothing plays.
            sensor("position", "Position", "{{ value_json.currentTime | default('None') }}",
                   ["device_class": "duration", "unit_of_measurement": "s", "icon": "mdi:timer-play"]),
            sensor("duration", "Duration", "{{ value_json.duration | default('None') }}",
                   ["device_class": "duration", "unit_of_measurement": "s", "icon": "mdi:timer"]),
            entity("sensor", "last_error", "Last error", [
                "state_topic": .string(scheme.deviceResult(topicID)),
                "value_template": "{{ 'none' if value_json.ok else (value_json.error.code | default('error')) }}",
                "json_attributes_topic": .string(scheme.deviceResult(topicID)),
                "json_attributes_template": "{{ (value_json.error | default({})) | tojson }}",
                "entity_category": "diagnostic", "icon": "mdi:alert-circle-outline"]),
            entity("number", "volume", "Volume", ["command_topic": .string(set), "state_topic": .string(state),
                                                  "value_template": "{{ ((value_json.volume | default(0)) * 100) | round(0) }}",
                                                  "command_template": #"{"command":"volume","level":{{ value | int }}}"#,
                                                  "min": 0, "max": 100, "step": 1, "unit_of_measurement": "%", "icon": "mdi:volume-high"]),
            entity("switch", "mute", "Mute", ["command_topic": .string(set), "state_topic": .string(state),
                                              "payload_on": #"{"command":"mute","muted":true}"#, "payload_off": #"{"command":"mute","muted":false}"#,
                                              "value_template": "{{ 'ON' if value_json.muted | default(false) else 'OFF' }}",
                                              "state_on": "ON", "state_off": "OFF", "icon": "mdi:volume-off"]),
            button("play", "Play", #"{"command":"play"}"#, "mdi:play"),
            button("pause", "Pause", #"{"command":"pause"}"#, "mdi:pause"),
            button("stop", "Stop", #"{"command":"stop"}"#, "mdi:stop"),
            button("next", "Next", #"{"command":"queue","action":"next"}"#, "mdi:skip-next"),
            button("previous", "Previous", #"{"command":"queue","action":"prev"}"#, "mdi:skip-previous"),
            entity("text", "cast_url", "Cast URL", ["command_topic": .string(set),
                                                    "command_template": #"{"command":"cast","media":{{ value | tojson }}}"#,
                                                    "max": .int(Int64(maxURLLength)), "mode": "text", "icon": "mdi:link"]),
            entity("text", "announce", "Announce", ["command_topic": .string(set),
                                                    "command_template": #"{"command":"announce","media":{{ value | tojson }}}"#,
                                                    "max": .int(Int64(maxURLLength)), "mode": "text", "icon": "mdi:bullhorn"]),
            entity("select", "job", "Active job", ["command_topic": .string(set), "state_topic": .string(scheme.deviceJob(topicID)),
                                                   "command_template": #"{"command":"job","job":{{ value | tojson }}}"#,
                                                   "options": .array((["none"] + jobs).map { .string($0) }), "icon": "mdi:playlist-play"]),
            trigger("media_finished"),
            trigger("command_failed"),
        ]
    }

    /// An entity id's object part as HA takes it: `[a-z0-9_]`.
    package static func entitySlug(_ text: String) -> String {
        String(text.lowercased().unicodeScalars.map { c -> Character in
            let v = c.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x61 && v <= 0x7A) || v == 0x5F ? Character(c) : "_"
        })
    }

    /// The select's state: the job that owns the device, or `none`.
    package static func activeJob(owner: String?, jobs: [String]) -> String {
        guard let owner, jobs.contains(owner) else { return "none" }
        return owner
    }
}
