/// At most one state event per key (a device's media, a device's status) per ``interval``: the
/// first goes out at once, later ones within the interval are held, the newest replacing the
/// older, and go out as one at the interval's end. A device that floods its statuses reaches the
/// event stream and MQTT ten times a second at most, and its last state is never lost. Pure: time
/// is a parameter (seconds on a monotonic clock).
struct StateEventCoalescer<Event> {
    enum Decision {
        /// Emit this event now.
        case emit
        /// Held: call ``due(_:now:)`` at this time (the first hold of the window), or a flush is
        /// already scheduled (nil).
        case held(flushAt: Double?)
    }

    let interval: Double
    private var lastEmit: [String: Double] = [:]
    private var heldEvents: [String: Event] = [:]
    /// Events held since a window began, by key (what a flood was folded into).
    private(set) var folded = 0

    init(interval: Double = 0.1) { self.interval = interval }

    /// An event for `key` at `now`.
    mutating func offer(_ event: Event, key: String, now: Double) -> Decision {
        if let last = lastEmit[key], now - last < interval - 1e-6 {
            let first = heldEvents.updateValue(event, forKey: key) == nil
            if !first { folded += 1 }
            return .held(flushAt: first ? last + interval : nil)
        }
        lastEmit[key] = now
        // A held event is older than this one: it must not come after it.
        if heldEvents.removeValue(forKey: key) != nil { folded += 1 }
        if lastEmit.count > 65_536 { lastEmit = lastEmit.filter { now - $0.value < interval } }
        return .emit
    }

    /// What a flush timer does when it fires.
    enum Flush {
        /// Emit this event (the newest held) now.
        case emit(Event)
        /// Too soon for what is held: a timer of a window that an event sent at once has closed
        /// since, or an early one. Call ``due(_:now:)`` again at this time.
        case wait(until: Double)
        /// Nothing is held.
        case none
    }

    /// The flush time of `key` came.
    mutating func due(_ key: String, now: Double) -> Flush {
        guard heldEvents[key] != nil else { return .none }
        if let last = lastEmit[key], now - last < interval - 1e-6 { return .wait(until: last + interval) }
        guard let event = heldEvents.removeValue(forKey: key) else { return .none }
        lastEmit[key] = now
        return .emit(event)
    }
}
