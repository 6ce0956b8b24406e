import CastCore

/// What `castline fleet status` knows of the fleet: every agent seen on the broker (its retained
/// `status`, its devices' retained `state`), built from the messages under `<base>/`. Pure.
struct FleetView {
    let base: String
    private(set) var agents: [String: Agent] = [:]

    struct Agent {
        var status = "unknown"
        var devices: [String: JSONValue] = [:]
    }

    init(base: String) { self.base = base }

    /// The topic filters that carry what the view shows.
    var filters: [String] { ["\(base)/+/status", "\(base)/+/device/+/state"] }

    /// Takes one message; true when the view changed.
    @discardableResult
    mutating func apply(topic: String, payload: [UInt8]) -> Bool {
        guard topic.hasPrefix(base + "/") else { return false }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if levels.count == 2, levels[1] == "status" {
            let status = String(decoding: payload, as: UTF8.self)
            guard agents[levels[0]]?.status != status else { return false }
            agents[levels[0], default: Agent()].status = status.isEmpty ? "unknown" : status
            return true
        }
        guard levels.count == 4, levels[1] == "device", levels[3] == "state" else { return false }
        if payload.isEmpty {
            return agents[levels[0]]?.devices.removeValue(forKey: levels[2]) != nil
        }
        guard let state = try? JSONValue.parse(bytes: payload) else { return false }
        agents[levels[0], default: Agent()].devices[levels[2]] = state
        return true
    }

    /// `{"agents": [{"agent", "status", "online", "devices": [{"id", "device", "state", "title", "link", "agentOnline"}]}]}`.
    var json: JSONValue {
        let list: [JSONValue] = agents.keys.sorted().map { name in
            let agent = agents[name]!
            let devices: [JSONValue] = agent.devices.keys.sorted().map { id in
                let d = agent.devices[id]!
                var o = JSONObject()
                o.set("id", d["id"] ?? .string(id))
                o.set("device", d["device"] ?? .string(id))
                o.set("state", d["state"] ?? "unknown")
                if let title = d["title"] { o.set("title", title) }
                if let link = d["link"] { o.set("link", link) }
                // A device's last state is what its agent published before it went away.
                o.set("current", .bool(agent.status == "online"))
                return .object(o)
            }
            return ["agent": .string(name), "status": .string(agent.status), "online": .bool(agent.status == "online"),
                    "devices": .array(devices)]
        }
        return ["agents": .array(list)]
    }

    /// One line per agent and one per device, for a terminal.
    var lines: [String] {
        var out: [String] = []
        for name in agents.keys.sorted() {
            let agent = agents[name]!
            out.append("\(name)  \(agent.status)  \(agent.devices.count) device\(agent.devices.count == 1 ? "" : "s")")
            for id in agent.devices.keys.sorted() {
                let d = agent.devices[id]!
                let title = d["title"]?.string.map { "  \($0)" } ?? ""
                let stale = agent.status == "online" ? "" : "  (last known)"
                out.append("  \(d["device"]?.string ?? id)  \(d["state"]?.string ?? "?")\(title)\(stale)")
            }
        }
        return out.isEmpty ? ["no castline agent on this broker under \(base)/"] : out
    }
}
