import CastCore

/// A delay of `base + jitter × u` seconds, `u` uniform in [0, 1) and drawn anew each time: the
/// simulator's one-way network latency per message and a player's time to its first frame.
/// Value type.
public struct JitteredDelay: Sendable, Hashable {
    /// Seconds every draw has (≥ 0).
    public var base: Double
    /// Width of the uniform part in seconds (≥ 0).
    public var jitter: Double

    /// Control commands and config files take milliseconds in 0…10,000 (10 s covers any real
    /// network or player; more is a typo).
    public static let millisecondRange: ClosedRange<Double> = 0...10_000

    /// No delay at all: the default, which leaves every path as it was without one.
    public static let zero = JitteredDelay(base: 0, jitter: 0)

    public init(base: Double, jitter: Double) {
        self.base = base
        self.jitter = jitter
    }

    /// From milliseconds; nil (with the reason) when either is not a finite number in
    /// ``millisecondRange``.
    public static func milliseconds(base: Double, jitter: Double) -> Result<JitteredDelay, JitteredDelayError> {
        for (name, value) in [("base_ms", base), ("jitter_ms", jitter)] where !(value.isFinite && millisecondRange.contains(value)) {
            return .failure(JitteredDelayError(message: "\(name) must be a number of milliseconds in 0…10000, found \(value)"))
        }
        return .success(JitteredDelay(base: base / 1000, jitter: jitter / 1000))
    }

    /// Both parts are 0: callers skip the delay entirely (no scheduling, no draw).
    public var isZero: Bool { base == 0 && jitter == 0 }

    /// One delay in seconds. Draws from `random` only when there is jitter, so a device without
    /// jitter keeps its generator (and every other draw from it) as before.
    public func draw(_ random: inout IdentifierGenerator) -> Double {
        jitter > 0 ? base + jitter * random.unitDraw() : base
    }

    /// `{"base_ms": …, "jitter_ms": …}` as in the config file and the control commands.
    public var millisecondsJSON: JSONValue { ["base_ms": .double(base * 1000), "jitter_ms": .double(jitter * 1000)] }
}

/// A delay given in milliseconds that is out of range or not a number.
public struct JitteredDelayError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}
