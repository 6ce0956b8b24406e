/// The user's consent to nearby messaging on this host (Nearby's opt-in).
public enum NearbyPermission: Equatable, Sendable {
    /// Never asked: nothing is published or browsed.
    case notDetermined
    case granted
    /// Revoked: nothing is published or browsed; active publications and subscriptions are suspended.
    case revoked

    package var isGranted: Bool { self == .granted }

    /// `granted`, `revoked`, `not determined`.
    package var word: String {
        switch self {
        case .notDetermined: return "not determined"
        case .granted: return "granted"
        case .revoked: return "revoked"
        }
    }

    /// The value stored in the permission file.
    var stored: String {
        switch self {
        case .notDetermined: return "not-determined"
        case .granted: return "granted"
        case .revoked: return "revoked"
        }
    }

    init?(stored: String) {
        switch stored {
        case "not-determined": self = .notDetermined
        case "granted": self = .granted
        case "revoked": self = .revoked
        default: return nil
        }
    }
}
