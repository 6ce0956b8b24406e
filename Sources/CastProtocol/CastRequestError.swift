import CastCore

/// Why a request did not get a successful reply. Device rejections keep the device's own words
/// (reason, detailed error code with its name).
public enum CastRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No reply within the request's timeout.
    case timedOut(after: Double)
    /// The connection ended before the reply (the session layer may retry after reconnecting).
    case disconnected(String)
    /// Cancelled by the caller.
    case cancelled
    /// A newer request of the same kind replaced it (e.g. a second LOAD before the first answered).
    case superseded(by: RequestID)
    /// `LOAD_FAILED`, with the device's `detailedErrorCode` when it sent one.
    case loadFailed(DetailedErrorCode?)
    /// `LOAD_CANCELLED`: a later load replaced this one on the device.
    case loadCancelled
    /// `INVALID_PLAYER_STATE`: the command does not apply in the player's state.
    case invalidPlayerState
    /// `INVALID_REQUEST` with its `reason` (INVALID_MEDIA_SESSION_ID, INVALID_COMMAND, …).
    case invalidRequest(ErrorReason?)
    /// `LAUNCH_ERROR` with its `reason` (NOT_FOUND, …).
    case launchError(ErrorReason?)

    public var description: String {
        switch self {
        case .timedOut(let seconds): return "no reply within \(seconds) s"
        case .disconnected(let why): return "disconnected before the reply: \(why)"
        case .cancelled: return "cancelled"
        case .superseded(let id): return "superseded by request \(id.rawValue)"
        case .loadFailed(let code?):
            return "LOAD_FAILED: \(code.name ?? "code") (\(code.rawValue))" + (code.explanation.map { ": \($0)" } ?? "")
        case .loadFailed(nil): return "LOAD_FAILED"
        case .loadCancelled: return "LOAD_CANCELLED"
        case .invalidPlayerState: return "INVALID_PLAYER_STATE"
        case .invalidRequest(let reason): return "INVALID_REQUEST" + (reason.map { ": \($0.rawValue)" } ?? "")
        case .launchError(let reason): return "LAUNCH_ERROR" + (reason.map { ": \($0.rawValue)" } ?? "")
        case .deviceError(let code, let reason):
            return "ERROR" + (reason.map { ": \($0.rawValue)" } ?? "") + (code.map { " (\($0.name ?? "code") \($0.rawValue))" } ?? "")
        }
    }

    /// A generic `ERROR` reply with its `detailedErrorCode` and `reason` when present.
    case deviceError(DetailedErrorCode?, ErrorReason?)

    /// The failure a reply payload reports, or nil when it is a success (a status, availability…).
    public static func reported(by payload: CastPayload) -> CastRequestError? {
        switch payload {
        case .media(.loadFailed(_, _, let code)): return .loadFailed(code)
        case .media(.loadCancelled): return .loadCancelled
        case .media(.invalidPlayerState): return .invalidPlayerState
        case .media(.invalidRequest(_, let reason)): return .invalidRequest(reason)
        case .receiver(.invalidRequest(_, let reason)): return .invalidRequest(reason)
        case .receiver(.launchError(_, let reason)): return .launchError(reason)
        case .media(.error(let members)):
            return .deviceError(members["detailedErrorCode"]?.int.map { DetailedErrorCode(rawValue: Int(truncatingIfNeeded: $0)) },
                                members["reason"]?.string.map { ErrorReason(rawValue: $0) })
        default: return nil
        }
    }
}
