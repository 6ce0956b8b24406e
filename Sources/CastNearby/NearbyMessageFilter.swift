/// Which messages a subscription receives (Nearby's `MessageFilter`): a namespace (nil: any) and
/// a set of types (nil: any type in the namespace).
package struct NearbyMessageFilter: Hashable, Sendable, CustomStringConvertible {
    package var namespace: String?
    package var types: Set<String>?

    package init(namespace: String? = NearbyMessage.defaultNamespace, types: Set<String>? = nil) {
        self.namespace = namespace
        self.types = types
    }

    /// Every message of every namespace.
    package static let everything = NearbyMessageFilter(namespace: nil, types: nil)

    package func matches(_ message: NearbyMessage) -> Bool {
        if let namespace, message.namespace != namespace { return false }
        if let types, !types.contains(message.type) { return false }
        return true
    }

    package var description: String {
        let ns = namespace ?? "*"
        guard let types else { return "\(ns)/*" }
        return types.sorted().map { "\(ns)/\($0)" }.joined(separator: ",")
    }
}

/// A message a subscription found or lost, with where it came from.
package struct NearbySighting: Sendable, Equatable {
    package var message: NearbyMessage
    package var medium: NearbyMediumKind
    /// The publisher as the medium names it (an mDNS host name, or the loopback endpoint's name).
    package var publisher: String
}

/// A change the manager's status handlers hear about (Nearby's permission, Bluetooth and
/// microphone handlers, here: the permission and each medium).
package enum NearbyStatusChange: Sendable, Equatable {
    case permission(NearbyPermission)
    case medium(NearbyMediumKind, NearbyMediumState)
}
