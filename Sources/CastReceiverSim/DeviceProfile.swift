import CastCore

/// The identity facts of a simulated device the state machine needs. Value type.
public struct DeviceProfile: Sendable, Hashable {
    /// 32 lowercase hex digits, no dashes (the mDNS `id`).
    public var uuid: String
    public var friendlyName: String
    public var model: String
    /// Video devices report `isActiveInput` / `isStandBy` in RECEIVER_STATUS; audio devices do not.
    public var isVideoDevice: Bool
    /// Device volume at power-on (0…1). Kept across ``ReceiverDevice/reboot(now:)``.
    public var initialVolume: Double
    /// Drop app and platform messages from a sender that has no virtual connection (CONNECT) to
    /// the destination, as openscreen's router does. `false` answers them anyway.
    public var requiresVirtualConnection: Bool
    /// How the model behaves in the field: idle closes, launches, ambient mode, CEC, reboots.
    /// ``FieldProfile/ideal`` (the default) is the well-behaved device of before issue 47.
    public var field: FieldProfile
    /// The rates SET_PLAYBACK_RATE (and LOAD's `playbackRate`) accept; others are INVALID_PARAMS.
    /// Default 0.5…2, the rates seen to work on the Default Media Receiver (pychromecast PR#660).
    public var playbackRates: ClosedRange<Double>
    /// From the playhead being set moving (PLAY, end of buffering, SEEK while playing, a new
    /// item) to the first frame, when it really moves: a model, no public measurement exists.
    public var firstFrame: JitteredDelay
    /// The device clock's error in parts per million: the playhead advances
    /// `playbackRate × (1 + ppm × 1e-6)` media seconds per real second. At most ±``maximumClockDriftPPM``.
    public var clockDriftPPM: Double

    /// Playback rates of a model that sets none: 0.5…2 (pychromecast PR#660).
    public static let defaultPlaybackRates: ClosedRange<Double> = 0.5...2
    /// The widest range a model may allow (a sanity bound: 1/16…16).
    public static let playbackRateBounds: ClosedRange<Double> = MediaSession.playbackRates
    /// ±1 % (a crystal is off by tens of ppm; more is a test of extremes).
    public static let maximumClockDriftPPM: Double = 10_000

    public init(
        uuid: String, friendlyName: String, model: String, isVideoDevice: Bool, initialVolume: Double = 1.0,
        requiresVirtualConnection: Bool = true, field: FieldProfile = .ideal,
        playbackRates: ClosedRange<Double> = DeviceProfile.defaultPlaybackRates, firstFrame: JitteredDelay = .zero,
        clockDriftPPM: Double = 0
    ) {
        self.field = field
        self.playbackRates = playbackRates
        self.firstFrame = firstFrame
        self.clockDriftPPM = clockDriftPPM
        self.uuid = uuid
        self.friendlyName = friendlyName
        self.model = model
        self.isVideoDevice = isVideoDevice
        self.initialVolume = initialVolume
        self.requiresVirtualConnection = requiresVirtualConnection
    }
}

/// Timing of the simulated player. Value type.
public struct PlaybackTiming: Sendable, Hashable {
    /// BUFFERING → PLAYING (or PAUSED without autoplay) this many seconds after a LOAD or a new
    /// queue item.
    public var bufferingDelay: Double = 0.2
    /// Before the LOAD reply, send the unsolicited status real firmware sends: top-level `IDLE`
    /// without `idleReason` and `extendedStatus.playerState: LOADING`.
    public var sendsLoadingStatus: Bool = true
    /// LAUNCH → the app runs and the RECEIVER_STATUS reply goes out this many seconds later, as
    /// a real device takes a second or more to load an app (0: at once).
    public var launchDelay: Double = 0
    /// Stop an app that shows no media this many seconds after its last use (a launch, a
    /// sender's message to it, media), as Nest Hubs stop dashboards; nil: the device's
    /// ``FieldProfile/appIdleTimeout`` (a global override of every profile's when set).
    public var appIdleTimeout: Double?
    /// What resets that timer on every device; nil: each device's ``FieldProfile/idleResetBy``.
    public var idleResetBy: FieldProfile.IdleReset?

    /// A LOAD of media on a loopback `http://` URL waits for the server's fetch
    /// (``DeviceOutput/checkMedia(_:)``): it succeeds, or fails with LOAD_FAILED and IDLE /
    /// ERROR, as a receiver's does. Other URLs are reported as ``DeviceOutput/mediaNotChecked(url:)``
    /// and play. Off: every LOAD plays (the state machine alone, without a server).
    public var checksLoopbackMedia: Bool = false

    public init(bufferingDelay: Double = 0.2, sendsLoadingStatus: Bool = true, launchDelay: Double = 0,
                checksLoopbackMedia: Bool = false, appIdleTimeout: Double? = nil, idleResetBy: FieldProfile.IdleReset? = nil) {
        self.idleResetBy = idleResetBy
        self.bufferingDelay = bufferingDelay
        self.sendsLoadingStatus = sendsLoadingStatus
        self.checksLoopbackMedia = checksLoopbackMedia
        self.launchDelay = launchDelay
        self.appIdleTimeout = appIdleTimeout
    }
}
