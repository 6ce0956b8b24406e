/// How a connection ended.
public enum CastConnectionCloseReason: Sendable, Equatable, CustomStringConvertible {
    /// We closed it (the connection's owner).
    case local
    /// The device closed it.
    case remoteClosed
    /// The device sent nothing (not even PONG) for longer than the heartbeat timeout.
    case heartbeatTimeout(silentFor: Double)
    /// A protocol or socket error ended it (bad frame, TLS alert, reset).
    case error(String)

    public var description: String {
        switch self {
        case .local: return "closed by us"
        case .remoteClosed: return "closed by the device"
        case .heartbeatTimeout(let silent): return "device silent for \(Int(silent.rounded())) s (heartbeat timeout)"
        case .error(let reason): return reason
        }
    }
}

/// Fired down the pipeline, just before `channelInactive`, by the handler that knows why the
/// connection ended: handlers that fail or finish what is pending say why.
public struct CastConnectionEnded: Sendable, Equatable {
    public let reason: CastConnectionCloseReason

    public init(reason: CastConnectionCloseReason) { self.reason = reason }
}
