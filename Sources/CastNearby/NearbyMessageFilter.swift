/// Which messages a subscription receives (Nearby's `MessageFilter`): a namespace (nil: any) and
/// a set of types (nil: any type in the namespace).
public struct NearbyMessageFilter: Hashable, Sendable, CustomStringConvertible {
    public var namespace: String?
    public var types: Set<String>?

    public init(namespace: String? = NearbyMessage.defaultNamespace, types: Set<String>? = nil) {
        self.namespace = namespace
        self.types = types
    }

    /// Every message of every namespace.
    public static let everything = NearbyMessageFilter(namespace: nil, types: nil)

    public func matches(_ message: NearbyMessage) -> Bool {
        if let namespace, message.namespace != namespace { return false }
        if let types, !types.contains(message.type) { return false }
        return true
    }

    public var description: String {
        let ns = namespace ?? "*"
        guard let types else { return "\(ns)/*" }
        return types.sorted().map { "\(ns)/\($0)" }.joined(separator: ",")
    }
}

/// A message a subscription found or lost, with where it came from.
public struct NearbySighting: Sendable, Equatable {
    public var message: NearbyMessage
    public var medium: NearbyMediumKind
    /// The publisher as the medium names it (an mDNS host name, or the loopback endpoint's name).
    public var publisher: String
}

/// A change the manager's status handlers hear about (Nearby's permission, Bluetooth and
/// microphone handlers, here: the permission and each medium).
public enum NearbyStatusChange: Sendable, Equatable {
    case permission(NearbyPermission)
    case medium(NearbyMediumKind, NearbyMediumState)
}
