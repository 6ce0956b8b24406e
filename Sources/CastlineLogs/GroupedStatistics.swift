import CastCore

/// `castline logs stats --by agent|device`: one ``LogStatistics`` per agent (site) or device, for
/// a central folder that holds many sites' journals (systemd-journal-remote). A record with no
/// agent or device goes under `-`. Value type.
package struct GroupedStatistics: Sendable {
    package enum Key: String, Sendable, CaseIterable {
        case agent, device
    }

    package let key: Key
    package private(set) var groups: [String: LogStatistics] = [:]

    package init(by key: Key) { self.key = key }

    /// The group a record counts in.
    package func group(of entry: LogEntry) -> String {
        switch key {
        case .agent: return entry.agent ?? "-"
        case .device: return entry.device ?? "-"
        }
    }

    package mutating func add(_ entry: LogEntry) {
        groups[group(of: entry), default: LogStatistics()].add(entry)
    }

    /// `{"by": "agent", "groups": {"<name>": <stats>, …}, "records": N, "inputs": […]}`.
    package func json(read: LogReadReport) -> JSONValue {
        var all = JSONObject()
        for name in groups.keys.sorted() { all.set(name, groups[name]!.json(read: LogReadReport())) }
        return ["by": .string(key.rawValue), "groups": .object(all), "records": .int(Int64(read.records)),
                "inputs": .array(read.inputs.map { .string($0) })]
    }

    /// One section per group, in name order, each as `logs stats` prints it.
    package func text(read: LogReadReport) -> String {
        var out: [String] = []
        for name in groups.keys.sorted() {
            out.append("== \(key.rawValue) \(name) ==")
            out.append(groups[name]!.text(read: LogReadReport()))
        }
        out.append("read: \(read.records) records from \(read.inputs.joined(separator: ", ")) (\(groups.count) \(key.rawValue)s)")
        return out.joined(separator: "\n")
    }
}
