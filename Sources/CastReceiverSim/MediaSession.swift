import CastCore

/// One media session of the simulated player: the queue, the player state and the clock.
///
/// `currentTime` is kept as `position` at time `anchor`; while PLAYING it advances with
/// `playbackRate × clockRate` from `anchor` on. When the playhead starts moving, `anchor` may lie
/// in the future (the first frame is pending): PLAYING is reported at once, `currentTime` holds
/// until then. IDLE is never stored: a session that goes IDLE is reported once and dropped.
struct MediaSession: Sendable, Equatable {
    var mediaSessionID: Int
    /// Every item has an `itemId` and `media`.
    var items: [QueueItem]
    var currentIndex: Int
    /// Built by QUEUE_LOAD / QUEUE_INSERT: `items` are reported in MEDIA_STATUS.
    var isQueue: Bool
    var repeatMode: RepeatMode = .off
    /// BUFFERING, PLAYING or PAUSED.
    var playerState: PlayerState = .buffering
    /// The state BUFFERING turns into: PLAYING (`true`) or PAUSED.
    var resumePlaying = true
    var bufferingUntil: Double?
    var position: Double = 0
    var anchor: Double = 0
    var playbackRate: Double = 1
    /// The device clock against real time, `1 + drift ppm × 1e-6`: the playhead advances
    /// ``effectiveRate`` media seconds per real second. The device cannot see its own drift, so
    /// MEDIA_STATUS reports `playbackRate` alone and `currentTime` is the true position.
    var clockRate: Double = 1
    /// When the playhead of the current item last started moving (after the first frame: in the
    /// future while it is pending); nil until it first does.
    var movingSince: Double?
    /// The start before ``movingSince``, restored when the playhead stops before a pending
    /// first frame (that start never happened).
    var movedBefore: Double?
    /// Counts jumps of the playhead (SEEK), which change the ground truth on their own.
    var seeks = 0
    var volume = Volume(level: 1, muted: false)
    var activeTrackIDs: [Int]?
    /// The media rule matching the current item.
    var rule: MediaRule?
    /// `videoInfo` from the fetched media's real streams (a rule's wins: an override).
    var probedVideoInfo: VideoInfo?
    /// The length ffprobe found in the fetched media of the current item (the device's truth).
    var probedDuration: Double?
    /// The LOAD's media is being fetched: no timed transition until the server reports it.
    var awaitingCheck = false

    var currentItem: QueueItem { items[currentIndex] }

    /// Current item's media (always present, see ``items``).
    var currentMedia: MediaInformation { currentItem.media ?? MediaInformation(contentID: "", contentType: "") }

    var isLive: Bool { currentMedia.streamType == .live }

    /// Durations taken seriously: 1 ms … about 3 years. Others count as unknown, so every deadline
    /// stays a sane distance from now and a repeating queue cannot spin in place.
    static let durations: ClosedRange<Double> = 0.001...1e8
    /// The widest range of playback rates a device profile may allow (a sanity bound; each
    /// model's own range is ``DeviceProfile/playbackRates``).
    static let playbackRates: ClosedRange<Double> = 0.0625...16
    /// Positions are clamped to this (no infinities in MEDIA_STATUS).
    static let maximumPosition: Double = 1e12

    /// The current item's length, as a receiver knows it: from the media itself (what ffprobe
    /// found in the fetched file), else the media rule's, and only then the sender's
    /// `media.duration`, which is a hint (issue 47); nil = unknown (LIVE, or nothing known):
    /// such media never finishes.
    var duration: Double? {
        guard !isLive else { return nil }
        if let probed = probedDuration, Self.durations.contains(probed) { return probed }
        if let ruled = rule?.duration, Self.durations.contains(ruled) { return ruled }
        if let given = currentMedia.duration, Self.durations.contains(given) { return given }
        return nil
    }

    /// `time` clamped to 0…duration (0…maximumPosition when the duration is unknown).
    func clampedPosition(_ time: Double) -> Double {
        guard time.isFinite else { return time > 0 ? (duration ?? Self.maximumPosition) : 0 }
        return min(max(0, time), duration ?? Self.maximumPosition)
    }

    /// `currentTime` at `now` (never before `anchor`, clamped to the duration).
    func currentTime(at now: Double) -> Double {
        var time = position
        if playerState == .playing, now > anchor { time += (now - anchor) * effectiveRate }
        return clampedPosition(time)
    }

    /// Media seconds per real second while PLAYING (the rate with the clock's drift).
    var effectiveRate: Double { playbackRate * clockRate }

    /// Moves the anchor to `now` (before a change of state, rate or position). A pending first
    /// frame stays pending: the anchor never moves back.
    mutating func settle(at now: Double) {
        position = currentTime(at: now)
        anchor = max(anchor, now)
    }

    /// When PLAYING reaches the end of the current item; nil when it never does.
    var finishTime: Double? {
        guard playerState == .playing, let duration, effectiveRate > 0 else { return nil }
        return anchor + max(0, duration - position) / effectiveRate
    }

    /// The next timed transition: end of buffering or end of the item.
    var deadline: Double? {
        if awaitingCheck { return nil }
        if playerState == .buffering { return bufferingUntil }
        return finishTime
    }

    /// Starts item `index` at `time`: BUFFERING for `delay`, then PLAYING or PAUSED.
    mutating func start(index: Int, at time: Double, position start: Double?, autoplay: Bool, delay: Double, rule: MediaRule?) {
        currentIndex = index
        self.rule = rule
        probedVideoInfo = nil
        probedDuration = nil
        position = clampedPosition(start ?? currentItem.startTime ?? 0)
        anchor = time
        movingSince = nil
        movedBefore = nil
        resumePlaying = autoplay
        if delay > 0 {
            playerState = .buffering
            bufferingUntil = time + delay
        } else {
            playerState = autoplay ? .playing : .paused
            bufferingUntil = nil
        }
    }

    /// BUFFERING is over at `time`.
    mutating func finishBuffering(at time: Double) {
        playerState = resumePlaying ? .playing : .paused
        bufferingUntil = nil
        anchor = time
    }

    /// Wants to play (PLAY) or to pause (PAUSE) at `now`. Returns whether anything changed.
    mutating func setPlaying(_ playing: Bool, at now: Double) -> Bool {
        switch playerState {
        case .buffering:
            let changed = resumePlaying != playing
            resumePlaying = playing
            return changed
        case .playing where !playing, .paused where playing:
            settle(at: now)
            playerState = playing ? .playing : .paused
            resumePlaying = playing
            if !playing { stopMoving(at: now) }
            return true
        default:
            return false
        }
    }

    /// The playhead, just set PLAYING at `now` from a stop (PLAY, buffering over, SEEK while
    /// playing, a new item), starts moving `firstFrame` seconds later, as a player shows its
    /// first frame only after decoding it. PLAYING is reported at once; `currentTime` holds.
    mutating func startMoving(at now: Double, firstFrame: Double) {
        if let since = movingSince, since <= now { movedBefore = since }
        anchor = now + max(0, firstFrame)
        movingSince = anchor
    }

    /// The playhead stopped at `now` (after ``settle(at:)``): a first frame still pending never
    /// came, so the start before it is the last one again.
    mutating func stopMoving(at now: Double) {
        guard let since = movingSince, since > now else { return }
        movingSince = movedBefore
        anchor = now
    }

    /// The ground truth at `now`.
    func truth(at now: Double) -> PlaybackTruth {
        PlaybackTruth(mediaSessionID: mediaSessionID, itemID: currentItem.itemID ?? 0, contentID: currentMedia.contentID,
                      playing: playerState == .playing, startedAt: movingSince, position: currentTime(at: now), at: now,
                      rate: effectiveRate)
    }

    /// What makes a ground-truth change (``PlaybackEvent``): compared before and after each call.
    struct Motion: Equatable {
        var mediaSessionID: Int
        var itemID: Int?
        var playing: Bool
        var movingSince: Double?
        var rate: Double
        var seeks: Int
    }

    var motion: Motion {
        Motion(mediaSessionID: mediaSessionID, itemID: currentItem.itemID, playing: playerState == .playing, movingSince: movingSince,
               rate: effectiveRate, seeks: seeks)
    }

    /// The item that follows the current one under ``repeatMode``; nil at the end of the queue.
    func indexAfterFinish() -> Int? {
        switch repeatMode {
        case .single: return currentIndex
        case .all, .allAndShuffle: return (currentIndex + 1) % items.count
        default: return currentIndex + 1 < items.count ? currentIndex + 1 : nil
        }
    }

    /// `currentIndex + jump` under ``repeatMode`` (REPEAT_ALL wraps); nil when outside the queue.
    func index(jumping jump: Int) -> Int? {
        let (target, overflow) = currentIndex.addingReportingOverflow(jump)
        if overflow { return nil }
        switch repeatMode {
        case .all, .allAndShuffle:
            let count = items.count
            return ((target % count) + count) % count
        default:
            return items.indices.contains(target) ? target : nil
        }
    }

    func index(ofItem itemID: Int) -> Int? { items.firstIndex { $0.itemID == itemID } }
}
