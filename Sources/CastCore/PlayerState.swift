/// The media player state in `MEDIA_STATUS.playerState` (open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
///
/// `LOADING` appears mostly in `extendedStatus`; unknown states (e.g. `SCANNING`) are kept.
public struct PlayerState: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `IDLE`: Nothing playing; see `idleReason`.
    public static let idle: PlayerState = "IDLE"
    /// `PLAYING`: Playing.
    public static let playing: PlayerState = "PLAYING"
    /// `PAUSED`: Paused.
    public static let paused: PlayerState = "PAUSED"
    /// `BUFFERING`: Waiting for data.
    public static let buffering: PlayerState = "BUFFERING"
    /// `LOADING`: Loading new media (usually reported in `extendedStatus`).
    public static let loading: PlayerState = "LOADING"

    public static let knownValues: [PlayerState] = [
        .idle, .playing, .paused, .buffering, .loading,
    ]
}
