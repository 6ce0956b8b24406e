#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long to wait before trying again: exponential backoff with jitter, the one formula every
/// retry loop in castline uses (a session's reconnects, a job's failed casts, an isolated plugin's
/// helper restarts, the MQTT bridge's broker connects).
///
/// The first retry waits ``initial``; each later one waits ``multiplier`` times longer, capped at
/// ``maximum``. Jitter draws each delay from `[d × (1 − jitter), d]`, so a fleet that lost one
/// peer does not retry in lock step; it only ever shortens a delay, never past the cap.
///
/// A pure value type: the caller counts the attempts and supplies the random number, so the
/// same inputs always give the same delay (tests pass a fixed `unit`). Out-of-range settings are
/// clamped, and the result is always finite and in `[0, maximum]`.
public struct Backoff: Sendable, Equatable {
    /// Seconds before the first retry.
    public var initial: Double
    /// Growth factor between retries (clamped to 1…16).
    public var multiplier: Double
    /// Upper bound of any delay, in seconds.
    public var maximum: Double
    /// Fraction of each delay that is random (0 = none, 1 = anywhere in `[0, d]`).
    public var jitter: Double

    public init(initial: Double, multiplier: Double = 2, maximum: Double, jitter: Double = 0) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = jitter
    }

    /// Seconds to wait before retry number `attempt` (1-based; less than 1 counts as 1). `unit` is
    /// a random number in `[0, 1)`: 0 gives the full delay, values towards 1 shorten it by up to
    /// ``jitter`` of it. Without jitter `unit` does not matter.
    public func delay(attempt: Int, unit: Double = 0) -> Double {
        let cap = Self.clamp(maximum, 0, .greatestFiniteMagnitude)
        let first = Self.clamp(initial, 0, cap)
        let growth = Self.clamp(multiplier, 1, 16)
        let exponent = Double(max(0, min(attempt - 1, 64)))
        // growth ≤ 16 and exponent ≤ 64: finite (≤ 1.2e77) unless `first` is huge, and then
        // min() takes the cap either way.
        let base = min(cap, first * pow(growth, exponent))
        let spread = Self.clamp(jitter, 0, 1)
        let random = Self.clamp(unit, 0, 1)
        return Self.clamp(base * (1 - spread * random), 0, cap)
    }

    private static func clamp(_ value: Double, _ low: Double, _ high: Double) -> Double {
        value.isNaN ? low : min(max(value, low), high)
    }
}
