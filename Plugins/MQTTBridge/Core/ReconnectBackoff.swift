import CastBackoff

/// When to try the broker again: exponential backoff from ``initial`` doubling to ``maximum``,
/// each delay drawn uniformly from its upper half (jitter), so a fleet of agents that lost one
/// broker does not come back in lockstep. The cap is low (1.5 s): a refused connect costs the
/// broker next to nothing, and an agent is back within 2 s of the broker (the 30 s cap it had
/// made a reconnect take 18 s). The numbers are the SDK's ``Backoff``; this counts the attempts
/// since the last connect. Pure: the random source is a parameter.
package struct ReconnectBackoff {
    package let initial: Double
    package let maximum: Double
    package private(set) var attempts = 0
    private let backoff: Backoff

    package init(initial: Double = 0.25, maximum: Double = 1.5) {
        self.initial = initial
        self.maximum = maximum
        backoff = Backoff(initial: initial, multiplier: 2, maximum: maximum, jitter: 0.5)
    }

    /// The delay before the next attempt, seconds; `unit` is a random number in [0, 1): 0 gives
    /// the lower end of the upper half, towards 1 the full delay.
    package mutating func next(unit: Double) -> Double {
        attempts += 1
        return backoff.delay(attempt: attempts, unit: 1 - min(max(unit, 0), 1))
    }

    /// A connection came up: start again from ``initial``.
    package mutating func reset() { attempts = 0 }
}
