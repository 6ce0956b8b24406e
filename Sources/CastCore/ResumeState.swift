/// What the player does after a SEEK (`resumeState`, open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
public struct ResumeState: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `PLAYBACK_START`: Play after seeking.
    public static let playbackStart: ResumeState = "PLAYBACK_START"
    /// `PLAYBACK_PAUSE`: Pause after seeking.
    public static let playbackPause: ResumeState = "PLAYBACK_PAUSE"

    public static let knownValues: [ResumeState] = [
        .playbackStart, .playbackPause,
    ]
}
