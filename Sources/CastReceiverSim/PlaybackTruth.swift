/// Where a device's playhead really is: what no sender can see (the first-frame delay, the
/// clock's drift), for tests through the control socket (`list`'s `state.playback`) and the
/// frame log (`playback` events). All times are the state machine's monotonic seconds; the
/// server turns them into wall-clock nanoseconds at its edge. Value type.
public struct PlaybackTruth: Sendable, Equatable {
    public var mediaSessionID: Int
    public var itemID: Int
    public var contentID: String
    /// PLAYING: the playhead moves, or will at ``startedAt`` (the first frame is pending).
    /// False while BUFFERING or PAUSED, and in the event of a session that ended.
    public var playing: Bool
    /// When the playhead of the current item last started moving, after the first-frame delay
    /// (in the future while that delay runs); nil when it has not started for this item and no
    /// start is scheduled (buffering, loaded paused).
    public var startedAt: Double?
    /// The true position in media seconds at ``at``.
    public var position: Double
    /// The instant ``position`` holds for.
    public var at: Double
    /// Media seconds per real second while playing: `playbackRate × (1 + drift ppm × 1e-6)`.
    public var rate: Double

    public init(
        mediaSessionID: Int, itemID: Int, contentID: String, playing: Bool, startedAt: Double?, position: Double,
        at: Double, rate: Double
    ) {
        self.mediaSessionID = mediaSessionID
        self.itemID = itemID
        self.contentID = contentID
        self.playing = playing
        self.startedAt = startedAt
        self.position = position
        self.at = at
        self.rate = rate
    }

    /// The true position at `time` ≥ ``at`` if nothing changes meanwhile: still before the
    /// first frame, then advancing at ``rate`` (not clamped to the duration).
    public func position(at time: Double) -> Double {
        guard playing, let startedAt else { return position }
        return position + max(0, time - max(at, startedAt)) * rate
    }
}

/// One change of the ground truth, in the order it happened (frame log `playback` events).
public struct PlaybackEvent: Sendable, Equatable {
    /// What changed.
    public enum Change: String, Sendable {
        /// A new media session or queue item (it buffers first unless buffering is off).
        case item
        /// The playhead starts moving (at ``PlaybackTruth/startedAt``, after the first frame).
        case start
        /// The playhead stops (PAUSE, SEEK with PLAYBACK_PAUSE).
        case stop
        /// The playhead jumps (SEEK, QUEUE_UPDATE with `currentTime`).
        case seek
        /// The effective rate changes (SET_PLAYBACK_RATE, a new clock drift).
        case rate
        /// The media session ended (FINISHED, STOP, another LOAD, the app stopped).
        case end
    }

    public var change: Change
    public var truth: PlaybackTruth

    public init(change: Change, truth: PlaybackTruth) {
        self.change = change
        self.truth = truth
    }
}
