import NIOCore

/// One direction of one connection under simulated network latency: each item is due at
/// `max(the previous item's due time, sent + delay)`, so items keep their order (as TCP keeps
/// them) however the delays are drawn, and a late one holds back the ones behind it.
///
/// Pure: times are the caller's monotonic seconds, nothing is scheduled here. The connection
/// handler appends, wakes at ``nextDue`` and takes what is due. Value type; owned by one event loop.
struct MessageDelayLine<Item> {
    private var pending = CircularBuffer<(due: Double, item: Item)>()
    /// Due time of the last item appended (−∞ before the first).
    private(set) var lastDue = -Double.infinity

    var isEmpty: Bool { pending.isEmpty }
    var count: Int { pending.count }

    /// When the first waiting item is due; nil when none waits.
    var nextDue: Double? { pending.first?.due }

    /// Appends `item`, sent at `now` with one-way `delay` (≥ 0); returns when it is due.
    @discardableResult
    mutating func append(_ item: Item, now: Double, delay: Double) -> Double {
        let due = max(lastDue, now + max(0, delay))
        lastDue = due
        pending.append((due, item))
        return due
    }

    /// Removes and returns, in order, every item due by `now`.
    mutating func takeDue(by now: Double) -> [Item] {
        var due: [Item] = []
        while let first = pending.first, first.due <= now {
            due.append(pending.removeFirst().item)
        }
        return due
    }

    /// Drops everything waiting (the connection closed).
    mutating func removeAll() {
        pending.removeAll()
    }
}
