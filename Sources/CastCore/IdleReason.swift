/// Why the player went `IDLE` (`MEDIA_STATUS.idleReason`, open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct IdleReason: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `CANCELLED`: A sender sent STOP.
    public static let cancelled: IdleReason = "CANCELLED"
    /// `INTERRUPTED`: Another LOAD replaced the media (take-over).
    public static let interrupted: IdleReason = "INTERRUPTED"
    /// `FINISHED`: Playback reached the end.
    public static let finished: IdleReason = "FINISHED"
    /// `ERROR`: Playback failed.
    public static let error: IdleReason = "ERROR"

    public static let knownValues: [IdleReason] = [
        .cancelled, .interrupted, .finished, .error,
    ]
}
