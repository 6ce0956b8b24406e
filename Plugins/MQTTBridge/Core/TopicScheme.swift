/// The bridge's topics (docs/fleet.md): everything under `<base>/<agent>/`, plus Home Assistant's
/// discovery topics under `<discovery_prefix>/`.
package struct TopicScheme: Sendable {
    package let base: String
    package let agent: String
    package let discoveryPrefix: String

    package init(base: String, agent: String, discoveryPrefix: String) {
        self.base = base
        self.agent = agent
        self.discoveryPrefix = discoveryPrefix
    }

    package var root: String { "\(base)/\(agent)" }
    package var status: String { "\(root)/status" }
    package var events: String { "\(root)/events" }
    /// What the bridge subscribes to: its own devices' and jobs' `set` topics, nothing else.
    package var subscriptions: [String] { ["\(root)/device/+/set", "\(root)/job/+/set"] }

    package func deviceState(_ topicID: String) -> String { "\(root)/device/\(topicID)/state" }
    package func deviceResult(_ topicID: String) -> String { "\(root)/device/\(topicID)/result" }
    package func deviceSet(_ topicID: String) -> String { "\(root)/device/\(topicID)/set" }
    package func deviceJob(_ topicID: String) -> String { "\(root)/device/\(topicID)/job" }
    /// `online` while castline's link to the TV is connected, else `offline` (retained).
    package func deviceAvailability(_ topicID: String) -> String { "\(root)/device/\(topicID)/availability" }
    /// Home Assistant's device triggers: `media_finished`, `command_failed` (not retained).
    package func deviceTrigger(_ topicID: String) -> String { "\(root)/device/\(topicID)/trigger" }
    package func jobState(_ name: String) -> String { "\(root)/job/\(name)/state" }
    package func jobResult(_ name: String) -> String { "\(root)/job/\(name)/result" }

    /// A `set` topic the bridge received: which device or job it addresses.
    package enum Target: Equatable {
        case device(String)
        case job(String)
    }

    package func target(of topic: String) -> Target? {
        guard topic.hasPrefix(root + "/") else { return nil }
        let rest = topic.dropFirst(root.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 3, rest[2] == "set", !rest[1].isEmpty else { return nil }
        switch rest[0] {
        case "device": return .device(String(rest[1]))
        case "job": return .job(String(rest[1]))
        default: return nil
        }
    }

    /// The device (topic level) a `…/device/<id>/result` topic is for; nil for any other topic.
    package func device(ofResult topic: String) -> String? {
        guard topic.hasPrefix(root + "/device/"), topic.hasSuffix("/result") else { return nil }
        let id = topic.dropFirst(root.count + 8).dropLast(7)
        return id.isEmpty || id.contains("/") ? nil : String(id)
    }

    /// A device id or job name as one topic level: `/`, `+`, `#` and control bytes become `_`.
    package static func level(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { c -> Character in
            (c == "/" || c == "+" || c == "#" || c.value < 0x20) ? "_" : Character(c)
        })
        return cleaned.isEmpty ? "_" : cleaned
    }

    /// An id Home Assistant accepts in a discovery topic (`[a-zA-Z0-9_-]`).
    package static func discoveryID(_ text: String) -> String {
        String(text.unicodeScalars.map { c -> Character in
            let v = c.value
            let ok = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || v == 0x5F || v == 0x2D
            return ok ? Character(c) : "_"
        })
    }
}
