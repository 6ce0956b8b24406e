/// At most one state fetch (and so one retained message) per device per ``interval``: the first
/// change goes at once, changes within the interval are folded into one fetch at its end, and a
/// change while a fetch is in flight is fetched again once it has landed. Pure: time is a
/// parameter (seconds on a monotonic clock).
package struct StateCoalescer {
    /// What to do for a device now.
    package enum Action: Equatable {
        case fetchNow
        /// Fetch at this time (schedule a timer; call ``due(_:now:)`` then).
        case fetchAt(Double)
        /// Nothing: a fetch is already in flight or scheduled and will cover this change.
        case none
    }

    package let interval: Double
    private var lastFetch: [String: Double] = [:]
    private var inFlight: Set<String> = []
    private var scheduled: Set<String> = []
    private var dirty: Set<String> = []

    package init(interval: Double = 0.1) { self.interval = interval }

    /// The device changed at `now`.
    package mutating func changed(_ device: String, now: Double) -> Action {
        if inFlight.contains(device) || scheduled.contains(device) {
            dirty.insert(device)
            return .none
        }
        return decide(device, now: now)
    }

    /// The timer of a ``Action/fetchAt(_:)`` fired.
    package mutating func due(_ device: String, now: Double) -> Action {
        scheduled.remove(device)
        return decide(device, now: now)
    }

    /// A fetch of the device's state landed (or failed) at `now`: what to do about changes that
    /// came while it was in flight.
    package mutating func fetched(_ device: String, now: Double) -> Action {
        inFlight.remove(device)
        guard dirty.remove(device) != nil else { return .none }
        return decide(device, now: now)
    }

    private mutating func decide(_ device: String, now: Double) -> Action {
        // A microsecond of slack: a timer that fires at exactly last + interval must fetch, not wait again.
        if let last = lastFetch[device], now - last < interval - 1e-6 {
            scheduled.insert(device)
            return .fetchAt(last + interval)
        }
        lastFetch[device] = now
        inFlight.insert(device)
        return .fetchNow
    }

    /// Forget everything (a new connection fetches every device afresh).
    package mutating func reset() {
        inFlight = []
        scheduled = []
        dirty = []
    }
}
