/// Why a nearby operation was refused. Each description says what to do next.
public enum NearbyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The user has not granted nearby permission (or revoked it): nothing is published or browsed.
    case permissionRequired(NearbyPermission)
    /// The content is larger than one mDNS packet can carry.
    case contentTooLarge(bytes: Int, limit: Int)
    case invalidNamespace(String, String)
    case invalidType(String, String)
    /// The strategy's discovery mode does not allow this role (publish with `.scan`, subscribe with `.publish`).
    case strategyForbids(NearbyStrategy.DiscoveryMode, role: String)
    /// The manager has no medium of this kind.
    case mediumNotConfigured(NearbyMediumKind)
    /// The manager was closed.
    case closed

    public var description: String {
        switch self {
        case .permissionRequired(let state):
            return "nearby permission is \(state.word): nothing is published or browsed until it is granted"
                + " (`castline nearby permission grant`)"
        case .contentTooLarge(let bytes, let limit):
            return "the message content is \(bytes) bytes; the limit is \(limit) bytes (one mDNS packet); nothing was published"
        case .invalidNamespace(let ns, let why): return "invalid namespace \"\(ns)\": \(why)"
        case .invalidType(let type, let why): return "invalid type \"\(type)\": \(why)"
        case .strategyForbids(let mode, let role):
            return "the strategy's discovery mode is \(mode.rawValue): it does not \(role) (use .both)"
        case .mediumNotConfigured(let kind): return "no \(kind.rawValue) medium is configured in this manager"
        case .closed: return "the nearby messages manager is closed"
        }
    }
}
