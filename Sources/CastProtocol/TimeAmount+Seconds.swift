import NIOCore

extension TimeAmount {
    /// The longest delay scheduled through ``seconds(clamping:)``: ten years (`Int64` nanoseconds hold 292).
    public static let longestDelay = 10 * 365 * 86_400.0

    /// `seconds` as a delay, whatever the Double (from a flag, a config file, a control command
    /// or options): NaN and negatives are 0, infinity and huge values are ``longestDelay``.
    public static func seconds(clamping seconds: Double) -> TimeAmount {
        guard seconds > 0 else { return .zero }
        return .nanoseconds(Int64(Swift.min(seconds, longestDelay) * 1e9))
    }
}
