/// When to try the broker again: exponential backoff from ``initial`` doubling to ``maximum``,
/// each delay drawn uniformly from its upper half (jitter), so a fleet of agents that lost one
/// broker does not come back in lockstep. The cap is low (1.5 s): a refused connect costs the
/// broker next to nothing, and an agent is back within 2 s of the broker (the 30 s cap it had
/// made a reconnect take 18 s). Pure: the random source is a parameter.
package struct ReconnectBackoff {
    package let initial: Double
    package let maximum: Double
    package private(set) var attempts = 0

    package init(initial: Double = 0.25, maximum: Double = 1.5) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt, seconds; `unit` is a random number in [0, 1).
    package mutating func next(unit: Double) -> Double {
        let ceiling = min(maximum, initial * Double(1 << min(attempts, 20)))
        attempts += 1
        return ceiling / 2 + ceiling / 2 * min(max(unit, 0), 1)
    }

    /// A connection came up: start again from ``initial``.
    package mutating func reset() { attempts = 0 }
}
