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

    public init(
        uuid: String, friendlyName: String, model: String, isVideoDevice: Bool, initialVolume: Double = 1.0,
        requiresVirtualConnection: Bool = true, field: FieldProfile = .ideal
    ) {
        self.field = field
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
