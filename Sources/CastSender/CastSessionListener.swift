import CastCore

/// Hears a session's life cycle and device status (all methods optional). Held weakly; called
/// on the session's executor, which is often its event loop's thread (during a start, and for
/// whatever a device message causes): keep the work short and never block, or hand it off —
/// while a listener runs, that loop's connections wait.
public protocol CastSessionListener: AnyObject, Sendable {
    func sessionWillStart(_ session: CastSession)
    func sessionDidStart(_ session: CastSession)
    func session(_ session: CastSession, didFailToStartWith error: CastSessionError)
    func session(_ session: CastSession, didSuspendWith reason: SuspendReason)
    func sessionWillResume(_ session: CastSession)
    /// `transferredTo`: the new device when the session moved.
    func session(_ session: CastSession, didResumeOn device: CastDevice, transferred: Bool)
    func sessionWillEnd(_ session: CastSession)
    /// `error`: nil when ended on request.
    func session(_ session: CastSession, didEndWith error: CastSessionError?)
    /// Device volume, mute, standby and active input (every RECEIVER_STATUS).
    func session(_ session: CastSession, didReceiveDeviceStatus status: CastDeviceStatus)
}

extension CastSessionListener {
    public func sessionWillStart(_ session: CastSession) {}
    public func sessionDidStart(_ session: CastSession) {}
    public func session(_ session: CastSession, didFailToStartWith error: CastSessionError) {}
    public func session(_ session: CastSession, didSuspendWith reason: SuspendReason) {}
    public func sessionWillResume(_ session: CastSession) {}
    public func session(_ session: CastSession, didResumeOn device: CastDevice, transferred: Bool) {}
    public func sessionWillEnd(_ session: CastSession) {}
    public func session(_ session: CastSession, didEndWith error: CastSessionError?) {}
    public func session(_ session: CastSession, didReceiveDeviceStatus status: CastDeviceStatus) {}
}

/// The device side of a RECEIVER_STATUS: volume, mute, standby, active input, what runs.
public struct CastDeviceStatus: Sendable, Equatable {
    /// 0…1; nil when the device did not say.
    public var volumeLevel: Double?
    public var isMuted: Bool?
    /// Video devices only: the TV is in standby.
    public var isStandBy: Bool?
    /// Video devices only: the Cast input is the TV's active input.
    public var isActiveInput: Bool?
    /// The running apps.
    public var applications: [ApplicationInfo]

    public init(_ status: ReceiverStatus) {
        volumeLevel = status.volume?.level
        isMuted = status.volume?.muted
        isStandBy = status.isStandBy
        isActiveInput = status.isActiveInput
        applications = status.applications
    }
}

/// What a session stream reports (``CastSession/updates()``).
public enum CastSessionUpdate: Sendable, Equatable {
    case event(CastSessionEvent, device: CastDevice)
    case deviceStatus(CastDeviceStatus)
    /// The group's members or the groups the device plays for changed (``CastSession/multizone``).
    case multizone(MultizoneView)
}
