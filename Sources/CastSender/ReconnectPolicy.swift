import CastBackoff

/// When to retry after a connection to a device is lost: exponential backoff with jitter
/// (CastBackoff's ``Backoff``, the one formula), and how many retries a session gets.
///
/// The first retry comes after ``initialDelay`` (fast: a dropped TCP connection is often back at
/// once); each later one waits ``multiplier`` times longer, capped at ``maxDelay``. Jitter draws
/// each delay from `[d × (1 − jitter), d]` so a fleet of sessions does not retry in lock step,
/// and never exceeds the cap. The default cap keeps a reconnect within a second of the device
/// being reachable again. Value type; pure.
public struct ReconnectPolicy: Sendable, Equatable {
    /// Seconds before the first retry.
    public var initialDelay: Double
    /// Growth factor between retries (≥ 1).
    public var multiplier: Double
    /// Upper bound of any delay, in seconds.
    public var maxDelay: Double
    /// Fraction of each delay that is random (0 = none, 1 = anywhere in `[0, d]`).
    public var jitter: Double
    /// Retries before the session ends; nil = unlimited.
    public var maxAttempts: Int?

    public init(initialDelay: Double = 0.05, multiplier: Double = 2, maxDelay: Double = 0.8, jitter: Double = 0.5,
                maxAttempts: Int? = nil) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxAttempts = maxAttempts
    }

    /// Never reconnect: a lost connection ends the session.
    public static let never = ReconnectPolicy(maxAttempts: 0)

    /// Whether retry number `attempt` (1-based) is allowed.
    public func allows(attempt: Int) -> Bool {
        guard let maxAttempts else { return true }
        return attempt <= maxAttempts
    }

    /// Seconds to wait before retry number `attempt` (1-based); `unit` is a random number in
    /// `[0, 1)` (the caller's, so tests are deterministic). Out-of-range settings are clamped:
    /// the result is always finite and in `[0, maxDelay]`, and `maxDelay` is at most an hour.
    public func delay(attempt: Int, unit: Double) -> Double {
        let cap = maxDelay.isNaN ? 0 : min(maxDelay, 3600)
        return Backoff(initial: initialDelay, multiplier: multiplier, maximum: cap, jitter: jitter).delay(attempt: attempt, unit: unit)
    }
}
