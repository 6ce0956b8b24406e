import NIOCore

extension TimeAmount {
    /// The longest delay the simulator schedules: ten years (`Int64` nanoseconds hold 292).
    static let longestDelay = 10 * 365 * 86_400.0

    /// `seconds` as a delay, whatever the Double (from a flag, a config file or a control
    /// command): NaN and negatives are 0, infinity and huge values are ``longestDelay``.
    static func seconds(clamping seconds: Double) -> TimeAmount {
        guard seconds > 0 else { return .zero }
        return .nanoseconds(Int64(Swift.min(seconds, longestDelay) * 1e9))
    }
}
