import CastProtocol

/// Why a connection to a Cast device failed or ended. Every case names the device and says why.
public enum CastTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// TCP did not connect (refused, unreachable, timed out).
    case connectFailed(endpoint: String, reason: String)
    /// The TLS handshake failed.
    case tlsFailed(endpoint: String, reason: String)
    /// Device authentication failed and the options require it: the answer did not prove the
    /// device (bad chain, signature, nonce…).
    case deviceAuthFailed(endpoint: String, reason: String)
    /// Device authentication is required but the device did not answer in time or closed the
    /// connection instead (a network problem, not proof of an impostor: worth retrying).
    case deviceAuthUnanswered(endpoint: String, reason: String)
    /// The connection is closed; `reason` says how it ended.
    case closed(endpoint: String, reason: CastConnectionCloseReason)
    /// A message could not be written (e.g. a frame above 65,536 bytes).
    case sendFailed(endpoint: String, reason: String)
    /// The connect was given up by its owner (``CastConnectAttempt/cancel()``).
    case cancelled(endpoint: String)

    public var description: String {
        switch self {
        case .connectFailed(let endpoint, let reason): return "cannot connect to \(endpoint): \(reason)"
        case .tlsFailed(let endpoint, let reason): return "TLS handshake with \(endpoint) failed: \(reason)"
        case .deviceAuthFailed(let endpoint, let reason): return "device authentication of \(endpoint) failed: \(reason)"
        case .deviceAuthUnanswered(let endpoint, let reason): return "device authentication of \(endpoint) got no answer: \(reason)"
        case .closed(let endpoint, let reason): return "connection to \(endpoint) is closed: \(reason)"
        case .sendFailed(let endpoint, let reason): return "cannot send to \(endpoint): \(reason)"
        case .cancelled(let endpoint): return "connecting to \(endpoint) was cancelled"
        }
    }
}
