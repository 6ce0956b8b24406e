/// How a publication or subscription uses the nearby medium (Nearby's `Strategy`).
public struct NearbyStrategy: Hashable, Sendable {
    /// Which roles are allowed: `.publish` only publishes, `.scan` only subscribes, `.both` does either.
    public enum DiscoveryMode: String, Sendable, CaseIterable {
        case publish, scan, both
    }

    package var discoveryMode: DiscoveryMode
    package var medium: NearbyMediumKind
    /// How long the publication or subscription stays active before it expires by itself
    /// (its expiry handler is called); nil: until cancelled.
    package var lifetime: Duration?

    package init(discoveryMode: DiscoveryMode = .both, medium: NearbyMediumKind = .mdns, lifetime: Duration? = nil) {
        self.discoveryMode = discoveryMode
        self.medium = medium
        self.lifetime = lifetime
    }

    /// Both roles, over the LAN (mDNS through avahi-daemon), no expiry.
    package static let `default` = NearbyStrategy()

    func allows(publishing: Bool) -> Bool {
        switch discoveryMode {
        case .both: return true
        case .publish: return publishing
        case .scan: return !publishing
        }
    }
}

/// The medium nearby messages travel over.
public enum NearbyMediumKind: String, Hashable, Sendable, CaseIterable {
    /// The LAN: DNS-SD records through avahi-daemon.
    case mdns
    /// In-process (tests, and apps that talk to themselves).
    case loopback
}

/// Whether a medium can carry messages now.
package enum NearbyMediumState: Equatable, Sendable, CustomStringConvertible {
    case available
    /// The reason says what is missing (avahi-daemon not running, no multicast interface up…).
    case unavailable(String)

    package var isAvailable: Bool { self == .available }

    package var description: String {
        switch self {
        case .available: return "available"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }
}
