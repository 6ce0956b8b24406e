import CastProtocol
import CastTransport

/// Where a ``CastSession`` is in its life. Value type.
public enum CastSessionState: Sendable, Equatable, CustomStringConvertible {
    /// Created, not started.
    case idle
    /// TLS, CONNECT, GET_STATUS, join or LAUNCH, CONNECT to the app, media GET_STATUS.
    case connecting
    /// Talking to the app.
    case connected
    /// The connection was lost; a retry is scheduled.
    case suspended(SuspendReason)
    /// Retry number `attempt` is under way.
    case resuming(attempt: Int)
    /// ``CastSession/end(stopCasting:)`` is under way.
    case ending
    /// Over: `nil` when ended on request, else why.
    case ended(CastSessionError?)
    /// Never started.
    case failed(CastSessionError)

    public var description: String {
        switch self {
        case .idle: return "idle"
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .suspended(let reason): return "suspended (\(reason))"
        case .resuming(let attempt): return "resuming (attempt \(attempt))"
        case .ending: return "ending"
        case .ended(nil): return "ended"
        case .ended(let error?): return "ended: \(error)"
        case .failed(let error): return "failed: \(error)"
        }
    }

    /// The short name used in logs (`state` field).
    public var name: String {
        switch self {
        case .idle: return "idle"
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .suspended: return "suspended"
        case .resuming: return "resuming"
        case .ending: return "ending"
        case .ended: return "ended"
        case .failed: return "failed"
        }
    }

    /// `ended` or `failed`: nothing more will happen.
    public var isFinal: Bool {
        switch self {
        case .ended, .failed: return true
        default: return false
        }
    }
}

/// Why a session was suspended.
public enum SuspendReason: Sendable, Equatable, CustomStringConvertible {
    /// The connection ended without our asking (device closed it, network error, heartbeat timeout).
    case connectionLost(CastConnectionCloseReason)
    /// A speaker group's leader changed: its endpoint moved from one `host:port` to another.
    case leaderMoved(from: String, to: String)

    public var description: String {
        switch self {
        case .connectionLost(let reason): return "connection lost: \(reason)"
        case .leaderMoved(let from, let to): return "leader moved: the group's endpoint moved from \(from) to \(to)"
        }
    }

    /// Whether the device went silent (heartbeat timeout) rather than closing.
    public var isHeartbeatTimeout: Bool {
        if case .connectionLost(.heartbeatTimeout) = self { return true }
        return false
    }
}

/// Why a session could not start, or why it ended without being asked to.
public enum CastSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// TCP, TLS or device authentication failed.
    case connectFailed(CastTransportError)
    /// A request of the start sequence failed (`step`: "GET_STATUS", "LAUNCH", "CONNECT", …).
    case requestFailed(step: String, CastRequestError)
    /// The app is not running and the join policy forbids launching it.
    case appNotRunning(appID: String)
    /// On resume: the app session we had is gone (the app was stopped or relaunched meanwhile).
    case sessionGone(appID: String, sessionID: String)
    /// The app was stopped by another sender or on the device.
    case appStopped(appID: String)
    /// Another sender launched a different app over ours.
    case appReplaced(appID: String, by: String)
    /// The device closed our virtual connection to the app (CLOSE from its transportId).
    case appClosedConnection(appID: String)
    /// Reconnecting failed `attempts` times (the policy's limit); `lastError` says why.
    case reconnectGaveUp(attempts: Int, lastError: String)
    /// The connection was lost and the policy does not reconnect.
    case connectionLost(CastConnectionCloseReason)
    /// The resume record could not be used.
    case resumeRecordUnusable(String)
    /// The session was ended while it was starting.
    case cancelled

    public var description: String {
        switch self {
        case .connectFailed(let error): return "\(error)"
        case .requestFailed(let step, let error): return "\(step) failed: \(error)"
        case .appNotRunning(let appID): return "app \(appID) is not running and the join policy does not launch it"
        case .sessionGone(let appID, let sessionID): return "app \(appID) session \(sessionID) no longer runs on the device"
        case .appStopped(let appID): return "app \(appID) was stopped by another sender or on the device"
        case .appReplaced(let appID, let other): return "app \(appID) was replaced by app \(other) (another sender launched it)"
        case .appClosedConnection(let appID): return "app \(appID) closed our connection"
        case .reconnectGaveUp(let attempts, let last): return "gave up reconnecting after \(attempts) attempt(s): \(last)"
        case .connectionLost(let reason): return "connection lost (reconnect disabled): \(reason)"
        case .resumeRecordUnusable(let why): return "cannot resume the saved session: \(why)"
        case .cancelled: return "cancelled while starting"
        }
    }

    /// The stable name used in logs and JSON (`endReason` field).
    public var name: String {
        switch self {
        case .connectFailed: return "connectFailed"
        case .requestFailed: return "requestFailed"
        case .appNotRunning: return "appNotRunning"
        case .sessionGone: return "sessionGone"
        case .appStopped: return "appStopped"
        case .appReplaced: return "appReplaced"
        case .appClosedConnection: return "appClosedConnection"
        case .reconnectGaveUp: return "reconnectGaveUp"
        case .connectionLost: return "connectionLost"
        case .resumeRecordUnusable: return "resumeRecordUnusable"
        case .cancelled: return "cancelled"
        }
    }
}

/// What listeners hear, in the iOS SDK's order: willStart → didStart | didFailToStart;
/// didSuspend → willResume → didResume; willEnd → didEnd.
public enum CastSessionEvent: Sendable, Equatable, CustomStringConvertible {
    case willStart
    case didStart
    case didFailToStart(CastSessionError)
    case didSuspend(SuspendReason)
    case willResume
    /// `transferred`: the session now runs on another device (``CastSession/device``).
    case didResume(transferred: Bool)
    case willEnd
    /// `nil` when ended on request.
    case didEnd(CastSessionError?)

    public var description: String {
        switch self {
        case .willStart: return "willStart"
        case .didStart: return "didStart"
        case .didFailToStart(let error): return "didFailToStart(\(error))"
        case .didSuspend(let reason): return "didSuspend(\(reason))"
        case .willResume: return "willResume"
        case .didResume(let transferred): return transferred ? "didResume(transferred)" : "didResume"
        case .willEnd: return "willEnd"
        case .didEnd(nil): return "didEnd"
        case .didEnd(let error?): return "didEnd(\(error))"
        }
    }

    /// The method-like name (`didSuspend`, …) used in logs.
    public var name: String {
        switch self {
        case .willStart: return "willStart"
        case .didStart: return "didStart"
        case .didFailToStart: return "didFailToStart"
        case .didSuspend: return "didSuspend"
        case .willResume: return "willResume"
        case .didResume: return "didResume"
        case .willEnd: return "willEnd"
        case .didEnd: return "didEnd"
        }
    }
}
