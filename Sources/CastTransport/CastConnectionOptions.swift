import CastDeviceAuth
import CastLogging
import CastProtocol
import SystemCrypto

/// How a ``CastConnection`` connects and watches the device. Value type.
public struct CastConnectionOptions: Sendable {
    /// What to do with device authentication (the deviceauth challenge after TLS).
    public enum DeviceAuthMode: Sendable, Equatable {
        /// Do not challenge the device.
        case off
        /// Challenge; on failure log a warning and go on (``CastConnection/deviceAuth`` says why).
        case warn
        /// Challenge; on failure close and throw ``CastTransportError/deviceAuthFailed(endpoint:reason:)``.
        case require
    }

    /// TCP connect timeout and, separately, TLS handshake and device-auth timeouts (seconds).
    package var connectTimeout: Double = 5
    /// PING a silent device after this many seconds (iOS SDK default 5).
    package var heartbeatInterval: Double = 5
    /// Declare a device lost after this many seconds of silence (iOS SDK default 10).
    package var heartbeatTimeout: Double = 10
    /// Fold a device's flood of broadcasts (``BroadcastFloodGuard``: at most 10 per namespace in
    /// 100 ms reach the session, the newest never lost). Off only to measure the layers below.
    package var foldsBroadcastFloods = true
    /// `source_id` of our messages on receiver-0 and of heartbeats.
    package var senderID = "sender-0"
    package var deviceAuth: DeviceAuthMode = .off
    /// Roots device-auth chains must end at (e.g. the simulator's root from `--export-root-ca`).
    package var trustAnchors: [Certificate] = []
    /// Where the connection's records go (`CastConnection`, `CastHeartbeat`, `CastRequestHandler`,
    /// `CastChannel.*`).
    package var logSystem: LogSystem = .shared
    /// Fields on the request records (`CastRequestHandler`): the owner's device and session.
    /// Empty: the endpoint as `device`.
    package var logFields: LogFields = [:]
    /// Hears every request's outcome (metrics), on the connection's event loop: keep it short.
    package var requestObserver: CastRequestObserver?
    /// The level of the `cannot connect` record. A caller that reports failed connects itself
    /// (a discovery probe's provider problem, a reconnect loop after its first attempt) lowers
    /// it, so an unreachable device is not a warning per attempt.
    package var connectFailureLevel: LogLevel = .warning
    /// Hears every frame in and out after the codec (``CastFrameTapHandler``): `castline capture`.
    package var frameObserver: CastFrameObserver?

    package init() {}
}

/// What device authentication found, for logs and policy (audio-only devices, warn mode).
public enum DeviceAuthResult: Sendable, Equatable {
    /// Not attempted (``CastConnectionOptions/DeviceAuthMode/off``).
    case notChecked
    /// The chain ended at a trust anchor and the signature covered our nonce and the TLS certificate.
    /// `audioOnly`: the device's certificates carry Cast's audio-only policy.
    case verified(deviceCommonName: String?, audioOnly: Bool)
    /// Checked and failed (warn mode keeps the connection).
    case failed(reason: String)
}
