import CastJSON

/// Home Assistant MQTT discovery for one TV: one HA device (identifiers `castline_<agent>_<id>`)
/// with state and title sensors, a volume number, play/pause/stop buttons, a "cast URL" text and
/// an "active job" select. Every entity has a unique_id and the agent's status topic as its
/// availability, so the TVs of an agent that went offline show unavailable. Commands go to the
/// device's `set` topic as the bridge's own JSON commands.
package enum HomeAssistantDiscovery {
    /// One retained config message.
    package struct Entity: Equatable {
        package let topic: String
        package let payload: JSONValue
    }

    package static func entities(scheme: TopicScheme, deviceID: String, topicID: String, name: String, model: String?, jobs: [String]) -> [Entity] {
        let node = TopicScheme.discoveryID("castline_\(scheme.agent)")
        let object = TopicScheme.discoveryID(topicID)
        let deviceKey = "\(node)_\(object)"
        let device: JSONValue = ["identifiers": [.string(deviceKey)], "name": .string(name), "manufacturer": "castline",
                                 "model": .string(model ?? "Cast device"), "via_device": .string(node),
                                 "suggested_area": .string(scheme.agent)]
        let state = scheme.deviceState(topicID), set = scheme.deviceSet(topicID)
        func entity(_ component: String, _ suffix: String, _ title: String, _ extra: JSONObject) -> Entity {
            var o: JSONObject = ["name": .string(title), "unique_id": .string("\(deviceKey)_\(suffix)"),
                                 "object_id": .string("\(deviceKey)_\(suffix)"),
                                 "availability_topic": .string(scheme.status), "payload_available": "online",
                                 "payload_not_available": "offline", "device": device, "qos": 1]
            for key in extra.keys { o.set(key, extra[key]!) }
            return Entity(topic: "\(scheme.discoveryPrefix)/\(component)/\(node)/\(object)_\(suffix)/config", payload: .object(o))
        }
        func button(_ command: String, _ icon: String) -> Entity {
            entity("button", command, command.prefix(1).uppercased() + command.dropFirst(),
                   ["command_topic": .string(set), "payload_press": .string(#"{"command":"\#(command)"}"#), "icon": .string(icon)])
        }
        return [
            entity("sensor", "state", "State", ["state_topic": .string(state), "value_template": "{{ value_json.state }}",
                                                "json_attributes_topic": .string(state), "icon": "mdi:cast"]),
            entity("sensor", "title", "Title", ["state_topic": .string(state), "value_template": "{{ value_json.title | default('') }}",
                                                "icon": "mdi:movie-open"]),
            entity("number", "volume", "Volume", ["command_topic": .string(set), "state_topic": .string(state),
                                                  "value_template": "{{ ((value_json.volume | default(0)) * 100) | round(0) }}",
                                                  "command_template": #"{"command":"volume","level":{{ value | int }}}"#,
                                                  "min": 0, "max": 100, "step": 1, "unit_of_measurement": "%", "icon": "mdi:volume-high"]),
            button("play", "mdi:play"),
            button("pause", "mdi:pause"),
            button("stop", "mdi:stop"),
            entity("text", "cast_url", "Cast URL", ["command_topic": .string(set),
                                                    "command_template": #"{"command":"cast","media":"{{ value }}"}"#,
                                                    "max": 255, "mode": "text", "icon": "mdi:link"]),
            entity("select", "job", "Active job", ["command_topic": .string(set), "state_topic": .string(scheme.deviceJob(topicID)),
                                                   "command_template": #"{"command":"job","job":"{{ value }}"}"#,
                                                   "options": .array((["none"] + jobs).map { .string($0) }), "icon": "mdi:playlist-play"]),
        ]
    }

    /// The select's state: the job that owns the device, or `none`.
    package static func activeJob(owner: String?, jobs: [String]) -> String {
        guard let owner, jobs.contains(owner) else { return "none" }
        return owner
    }
}
