/// Which distinct messages one medium currently sees, from the instances that carry them: a
/// message is found when its first instance appears and lost when its last one goes (the same
/// message from two publishers, or over IPv4 and IPv6, is found once). Pure state, no I/O.
struct NearbyFoundSet: Sendable {
    enum Change: Equatable, Sendable {
        case found(NearbyMessage, publisher: String)
        case lost(NearbyMessage, publisher: String)
    }

    private var instances: [String: (message: NearbyMessage, publisher: String)] = [:]
    private var counts: [NearbyMessage: Int] = [:]

    /// The messages found now, with a publisher of each.
    var messages: [(NearbyMessage, String)] {
        var seen = Set<NearbyMessage>()
        var result: [(NearbyMessage, String)] = []
        for key in instances.keys.sorted() {
            guard let entry = instances[key], seen.insert(entry.message).inserted else { continue }
            result.append((entry.message, entry.publisher))
        }
        return result
    }

    var instanceCount: Int { instances.count }

    mutating func appeared(_ instance: String, message: NearbyMessage, publisher: String) -> [Change] {
        var changes: [Change] = []
        if let previous = instances[instance] {
            if previous.message == message {
                instances[instance] = (message, publisher)
                return []
            }
            changes += remove(instance)
        }
        instances[instance] = (message, publisher)
        counts[message, default: 0] += 1
        if counts[message] == 1 { changes.append(.found(message, publisher: publisher)) }
        return changes
    }

    mutating func disappeared(_ instance: String) -> [Change] { remove(instance) }

    /// Forgets every instance: each found message is lost.
    mutating func removeAll() -> [Change] {
        let changes = messages.map { Change.lost($0.0, publisher: $0.1) }
        instances = [:]
        counts = [:]
        return changes
    }

    private mutating func remove(_ instance: String) -> [Change] {
        guard let entry = instances.removeValue(forKey: instance) else { return [] }
        let left = (counts[entry.message] ?? 1) - 1
        if left > 0 {
            counts[entry.message] = left
            return []
        }
        counts.removeValue(forKey: entry.message)
        return [.lost(entry.message, publisher: entry.publisher)]
    }
}
