import CastProtocol
import CastLogging
import CastTransport
import SystemCrypto

/// Everything a ``CastContext`` and its managers are configured with. Value type.
public struct CastOptions: Sendable {
    /// Whether to join the app when it already runs or always launch it.
    public enum JoinPolicy: Sendable, Equatable {
        /// Join a running instance of the app, launch it otherwise (the iOS SDK's behaviour).
        case joinOrLaunch
        /// Always LAUNCH (a running instance is relaunched by the device).
        case alwaysLaunch
        /// Only join; fail with ``CastSessionError/appNotRunning(appID:)`` when it does not run.
        case joinOnly
        /// Join whatever app runs with the media namespace, whatever its app id (remote-control
        /// commands: pause what is playing); fail with ``CastSessionError/appNotRunning(appID:)``
        /// when none does (only the idle screen or nothing runs).
        case joinAnyMediaApp
        /// A device session rather than an app session: connect to the device and follow
        /// whatever app runs there, joining it (its media status included) when it starts and
        /// letting it go when it stops or is replaced. The session never ends because an app
        /// does; ``CastSession/launch(appID:)`` and ``CastSession/stopApplication()`` change the
        /// app. What a hub that owns one connection per device uses.
        case follow
    }

    /// The receiver app to join or launch (default: the Default Media Receiver).
    public var receiverAppID: String
    /// Which devices discovery keeps (by default: those that can run ``receiverAppID``).
    public var discoveryCriteria: DiscoveryCriteria
    /// Do not start discovery when the context is created (start it with ``DiscoveryManager/start()``).
    public var disableDiscoveryAutostart = false
    public var joinPolicy: JoinPolicy = .joinOrLaunch
    /// Hears every request's outcome (type, seconds, failure): metrics.
    public var requestObserver: CastRequestObserver?
    /// PING a silent device after this many seconds.
    public var heartbeatInterval: Double = 5
    /// Suspend the session after this many seconds of silence.
    public var heartbeatTimeout: Double = 10
    /// TCP connect, TLS and device-auth timeouts (each).
    public var connectTimeout: Double = 5
    /// Default timeout of requests (LOAD, SEEK, GET_STATUS, …).
    public var requestTimeout: Double = 10
    /// The longest a session's start (or any of its connection attempts) can take with these
    /// timeouts: three connect steps and three requests. What a wait for one is bounded by.
    var longestStart: Double { connectTimeout * 3 + requestTimeout * 3 }
    public var reconnectPolicy = ReconnectPolicy()
    /// Where the session is saved for resuming after a process restart; nil = not saved.
    public var sessionResumeFile: String?
    /// `source_id` of our messages (heartbeat, receiver-0 and the app).
    public var senderID = "sender-0"
    /// `userAgent` in CONNECT.
    public var userAgent = "castline"
    public var deviceAuth: CastConnectionOptions.DeviceAuthMode = .off
    /// Device-auth roots; empty = ``DefaultTrustAnchors/castRoots`` when any are installed.
    public var trustAnchors: [Certificate] = []
    /// Where every record goes.
    public var logSystem: LogSystem = .shared
    /// Hears every frame of the session's connections (`castline capture`).
    public var frameObserver: CastFrameObserver?

    public init(receiverAppID: String = "CC1AD845") {
        self.receiverAppID = receiverAppID
        self.discoveryCriteria = DiscoveryCriteria(appIDs: [receiverAppID])
    }

    /// The transport options derived from these.
    var connectionOptions: CastConnectionOptions {
        var options = CastConnectionOptions()
        options.connectTimeout = connectTimeout
        options.heartbeatInterval = heartbeatInterval
        options.heartbeatTimeout = heartbeatTimeout
        options.senderID = senderID
        options.deviceAuth = deviceAuth
        options.trustAnchors = trustAnchors.isEmpty ? DefaultTrustAnchors.castRoots : trustAnchors
        options.logSystem = logSystem
        options.requestObserver = requestObserver
        options.frameObserver = frameObserver
        return options
    }
}

/// Which discovered devices to keep. Value type.
public struct DiscoveryCriteria: Sendable, Equatable {
    /// Keep a device only when it supports one of these apps (mDNS subtype or
    /// GET_APP_AVAILABILITY); empty = every device. A device known to support none of them
    /// (each answered unavailable) is dropped; one whose support is unknown is kept when
    /// ``keepUnknown`` is true.
    public var appIDs: Set<String>
    public var keepUnknown: Bool

    public init(appIDs: Set<String> = [], keepUnknown: Bool = true) {
        self.appIDs = appIDs
        self.keepUnknown = keepUnknown
    }

    /// Every device.
    public static let any = DiscoveryCriteria()

    /// Whether `device` passes.
    public func accepts(_ device: CastDevice) -> Bool {
        guard !appIDs.isEmpty else { return true }
        if !device.supportedAppIDs.isDisjoint(with: appIDs) { return true }
        if appIDs.isSubset(of: device.unavailableAppIDs) { return false }
        return keepUnknown
    }
}
