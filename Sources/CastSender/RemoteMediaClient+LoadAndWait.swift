import CastCore
import CastProtocol

/// Why ``RemoteMediaClient/loadAndWait(_:options:until:timeout:)`` did not reach the state.
public enum LoadWaitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The LOAD failed (LOAD_FAILED, INVALID_REQUEST, …): the device refused the media.
    case refused(CastRequestError)
    /// No answer or the connection went away.
    case failed(CastRequestError)
    /// The player went IDLE with this reason (ERROR, …) instead.
    case wentIdle(IdleReason)
    /// Neither the state nor IDLE within the timeout.
    case timedOut(after: Double, lastState: PlayerState?)
    /// The session ended (or was stopped) before the player reached the state.
    case sessionEnded(lastState: PlayerState?)

    public var description: String {
        switch self {
        case .refused(let error): return "LOAD refused: \(error)"
        case .failed(let error): return "LOAD: \(error)"
        case .wentIdle(let reason): return "the device stopped the media (\(reason.rawValue))"
        case .timedOut(let seconds, let last):
            return "not playing within \(seconds) s (last state: \(last?.rawValue ?? "none"))"
        case .sessionEnded(let last):
            return "the session ended before the media played (last state: \(last?.rawValue ?? "none"))"
        }
    }

    /// True when the device itself said no (as opposed to the network or a timeout).
    public var isRefusal: Bool {
        switch self {
        case .refused, .wentIdle: return true
        case .failed, .timedOut, .sessionEnded: return false
        }
    }
}

extension RemoteMediaClient {
    /// Loads `media` and waits until the player reports `wanted` (PLAYING; PAUSED for a paused
    /// load), or goes IDLE with a reason, or `timeout` seconds pass. Subscribes before the LOAD,
    /// so no status is missed.
    public func loadAndWait(_ media: MediaInformation, options: MediaLoadOptions = MediaLoadOptions(),
                            until wanted: PlayerState = .playing, timeout: Double = 30) async -> Result<MediaStatus, LoadWaitError> {
        let updates = statusUpdates()
        var loadOptions = options
        if loadOptions.timeout == nil { loadOptions.timeout = timeout }
        let loaded: MediaStatus?
        switch await load(media, options: loadOptions).result {
        case .failure(let error):
            switch error {
            case .timedOut, .disconnected, .cancelled: return .failure(.failed(error))
            default: return .failure(.refused(error))
            }
        case .success(let status): loaded = status
        }
        // Only statuses of the new media session count: the one it replaced ends IDLE/INTERRUPTED.
        let sessionID = loaded?.mediaSessionID
        @Sendable func isOurs(_ status: MediaStatus) -> Bool { sessionID == nil || status.mediaSessionID == sessionID }
        if let status = mediaStatus, isOurs(status), status.effectivePlayerState == wanted { return .success(status) }
        let outcome = await updates.firstOutcome(within: timeout) { status in
            guard let status, isOurs(status) else { return false }
            return status.effectivePlayerState == wanted || (status.playerState == .idle && status.idleReason != nil)
        }
        var reached: MediaStatus?
        if case .found(let status) = outcome { reached = status }
        let status = reached ?? mediaStatus
        if let status, status.effectivePlayerState == wanted { return .success(status) }
        if let status, status.playerState == .idle, let reason = status.idleReason { return .failure(.wentIdle(reason)) }
        // Nothing came: the status stream ended first (its session ended), or the time ran out.
        if case .ended = outcome { return .failure(.sessionEnded(lastState: mediaStatus?.effectivePlayerState)) }
        return .failure(.timedOut(after: timeout, lastState: mediaStatus?.effectivePlayerState))
    }
}
