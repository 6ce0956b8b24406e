import CastLogging
import Dispatch
import Synchronization

/// Publishes and subscribes to nearby messages (Nearby's `MessagesClient`), gated by the user's
/// permission.
///
/// - ``publish(_:strategy:expired:)`` and ``subscribe(filter:strategy:found:lost:expired:)``
///   throw ``NearbyError/permissionRequired(_:)`` unless the permission is granted. Revoked
///   later (in any castline process): everything is withdrawn from the media, browsing stops,
///   found messages are reported lost; granted again: publications and subscriptions resume.
/// - A medium that is unavailable (avahi-daemon absent or gone, no multicast interface) keeps the
///   publications and subscriptions; they resume when it is back. Status handlers hear both kinds
///   of change.
/// - Thread-safe. Handlers run one at a time, in order, on the manager's delivery queue; they may
///   call back into the manager.
package final class NearbyMessagesManager: @unchecked Sendable {
    private struct Publication {
        var message: NearbyMessage
        var strategy: NearbyStrategy
        var expired: (@Sendable () -> Void)?
    }

    private struct Subscription {
        var filter: NearbyMessageFilter
        var strategy: NearbyStrategy
        var found: @Sendable (NearbySighting) -> Void
        var lost: @Sendable (NearbySighting) -> Void
        var expired: (@Sendable () -> Void)?
    }

    private struct State {
        var permission: NearbyPermission
        var mediumStates: [NearbyMediumKind: NearbyMediumState] = [:]
        var publications: [UInt64: Publication] = [:]
        var subscriptions: [UInt64: Subscription] = [:]
        var found: [NearbyMediumKind: NearbyFoundSet] = [:]
        var browsing: Set<NearbyMediumKind> = []
        var statusHandlers: [@Sendable (NearbyStatusChange) -> Void] = []
        var nextID: UInt64 = 0
        var closed = false
    }

    private let media: [NearbyMediumKind: any NearbyMedium]
    private let permissions: NearbyPermissionStore
    private let log: Logger
    private let state: Mutex<State>
    private let delivery = DispatchQueue(label: "castline.nearby.delivery")
    private let idBase: UInt64
    private var permissionToken: Int?

    /// Starts `media` and follows the permission in `permissions`. `statusHandler` (if any) is in
    /// place before the media start, so it hears their first change (e.g. avahi-daemon connected).
    package init(media: [any NearbyMedium], permissions: NearbyPermissionStore, logSystem: LogSystem,
                statusHandler: (@Sendable (NearbyStatusChange) -> Void)? = nil) {
        self.media = Dictionary(media.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        self.permissions = permissions
        log = Logger(class: "NearbyMessagesManager", system: logSystem)
        idBase = UInt64.random(in: 1...(UInt64.max >> 16)) << 16
        var initial = State(permission: permissions.permission)
        for medium in media { initial.mediumStates[medium.kind] = medium.state }
        if let statusHandler { initial.statusHandlers.append(statusHandler) }
        state = Mutex(initial)
        for medium in media {
            let kind = medium.kind
            medium.start { [weak self] event in self?.mediumEvent(kind, event) }
        }
        permissionToken = permissions.onChange { [weak self] permission in self?.permissionChanged(permission) }
        log.info("nearby messages manager started", ["media": .string(media.map(\.kind.rawValue).sorted().joined(separator: ",")),
                                                     "permission": .string(permissions.permission.word)])
    }

    deinit { close() }

    /// The permission the manager acts on.
    package var permission: NearbyPermission { state.withLock { $0.permission } }

    /// The current state of a medium (nil: not configured).
    package func mediumState(_ kind: NearbyMediumKind) -> NearbyMediumState? { state.withLock { $0.mediumStates[kind] } }

    /// Adds a handler for permission and medium changes (called on change only).
    package func onStatusChange(_ handler: @escaping @Sendable (NearbyStatusChange) -> Void) {
        state.withLock { $0.statusHandlers.append(handler) }
    }

    /// Publishes `message` until the publication is cancelled, released, or its strategy's
    /// lifetime ends (then `expired` is called).
    package func publish(_ message: NearbyMessage, strategy: NearbyStrategy = .default,
                        expired: (@Sendable () -> Void)? = nil) throws(NearbyError) -> NearbyPublication {
        try message.validate()
        guard strategy.allows(publishing: true) else { throw .strategyForbids(strategy.discoveryMode, role: "publish") }
        guard let medium = media[strategy.medium] else { throw .mediumNotConfigured(strategy.medium) }
        let id: UInt64 = try state.withLock { s throws(NearbyError) -> UInt64 in
            guard !s.closed else { throw .closed }
            guard s.permission.isGranted else { throw .permissionRequired(s.permission) }
            s.nextID += 1
            let id = idBase &+ s.nextID
            s.publications[id] = Publication(message: message, strategy: strategy, expired: expired)
            medium.publish(id: id, message: message)
            if !(s.mediumStates[strategy.medium]?.isAvailable ?? false) {
                log.warning("the \(strategy.medium.rawValue) medium is unavailable: the message goes out when it is back",
                            ["publication": .string(String(id, radix: 16))])
            }
            return id
        }
        log.info("publishing \(message)", ["publication": .string(String(id, radix: 16)), "medium": .string(strategy.medium.rawValue),
                                          "bytes": .int(message.content.count)])
        scheduleExpiry(id, after: strategy.lifetime)
        return NearbyPublication(manager: self, id: id)
    }

    /// Subscribes to messages matching `filter`: `found` for each distinct message when first seen
    /// (at once for those already seen), `lost` when it is withdrawn or its publisher vanishes.
    package func subscribe(filter: NearbyMessageFilter = NearbyMessageFilter(), strategy: NearbyStrategy = .default,
                          found: @escaping @Sendable (NearbySighting) -> Void, lost: @escaping @Sendable (NearbySighting) -> Void,
                          expired: (@Sendable () -> Void)? = nil) throws(NearbyError) -> NearbySubscription {
        if let ns = filter.namespace { try NearbyMessage.validate(namespace: ns) }
        for type in filter.types ?? [] { try NearbyMessage.validate(type: type) }
        guard strategy.allows(publishing: false) else { throw .strategyForbids(strategy.discoveryMode, role: "subscribe") }
        guard media[strategy.medium] != nil else { throw .mediumNotConfigured(strategy.medium) }
        let id: UInt64 = try state.withLock { s throws(NearbyError) -> UInt64 in
            guard !s.closed else { throw .closed }
            guard s.permission.isGranted else { throw .permissionRequired(s.permission) }
            s.nextID += 1
            let id = idBase &+ s.nextID
            let subscription = Subscription(filter: filter, strategy: strategy, found: found, lost: lost, expired: expired)
            s.subscriptions[id] = subscription
            for (message, publisher) in s.found[strategy.medium]?.messages ?? [] where filter.matches(message) {
                let sighting = NearbySighting(message: message, medium: strategy.medium, publisher: publisher)
                delivery.async { [weak self] in if self?.isActive(id) == true { found(sighting) } }
            }
            updateBrowsing(&s)
            return id
        }
        log.info("subscribed to \(filter)", ["subscription": .string(String(id, radix: 16)), "medium": .string(strategy.medium.rawValue)])
        scheduleExpiry(id, after: strategy.lifetime)
        return NearbySubscription(manager: self, id: id)
    }

    /// Cancels everything and stops the media. Idempotent.
    package func close() {
        // The removed entries (and the closures they hold) are released after the lock: a closure
        // may own the last reference to a handle, whose deinit takes the lock again.
        let removed = state.withLock { s -> (Bool, [UInt64: Publication], [UInt64: Subscription], [@Sendable (NearbyStatusChange) -> Void]) in
            guard !s.closed else { return (false, [:], [:], []) }
            s.closed = true
            defer { s.publications = [:]; s.subscriptions = [:]; s.statusHandlers = [] }
            return (true, s.publications, s.subscriptions, s.statusHandlers)
        }
        guard removed.0 else { return }
        if let token = permissionToken { permissions.removeHandler(token) }
        for medium in media.values { medium.stop() }
        log.info("nearby messages manager closed")
    }

    // MARK: Handles

    func cancelPublication(_ id: UInt64) {
        let removed = state.withLock { s -> Publication? in
            guard let publication = s.publications.removeValue(forKey: id) else { return nil }
            media[publication.strategy.medium]?.withdraw(id: id)
            return publication
        }
        if let removed { log.info("unpublished \(removed.message)", ["publication": .string(String(id, radix: 16))]) }
    }

    func cancelSubscription(_ id: UInt64) {
        let removed = state.withLock { s -> Subscription? in
            guard let subscription = s.subscriptions.removeValue(forKey: id) else { return nil }
            updateBrowsing(&s)
            return subscription
        }
        if removed != nil { log.info("unsubscribed", ["subscription": .string(String(id, radix: 16))]) }
    }

    /// Whether subscription or publication `id` is still active (deliveries queued before a cancel are dropped).
    private func isActive(_ id: UInt64) -> Bool {
        state.withLock { !$0.closed && ($0.subscriptions[id] != nil || $0.publications[id] != nil) }
    }

    private func scheduleExpiry(_ id: UInt64, after lifetime: Duration?) {
        guard let lifetime else { return }
        let (seconds, attoseconds) = lifetime.components
        // At most ten years (a longer lifetime is as good as none, and the arithmetic stays in range).
        let nanoseconds = min(max(0, seconds), 315_360_000) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        delivery.asyncAfter(deadline: .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int.max))))) { [weak self] in
            self?.expire(id)
        }
    }

    private func expire(_ id: UInt64) {
        let removed = state.withLock { s -> (Publication?, Subscription?) in
            if let publication = s.publications.removeValue(forKey: id) {
                media[publication.strategy.medium]?.withdraw(id: id)
                return (publication, nil)
            }
            if let subscription = s.subscriptions.removeValue(forKey: id) {
                updateBrowsing(&s)
                return (nil, subscription)
            }
            return (nil, nil)
        }
        guard removed.0 != nil || removed.1 != nil else { return }
        log.info("expired (strategy lifetime)", ["id": .string(String(id, radix: 16))])
        (removed.0?.expired ?? removed.1?.expired)?()   // already on the delivery queue
    }

    // MARK: Events

    /// Browsing runs on a medium while permission is granted and a subscription uses it.
    private func updateBrowsing(_ s: inout State) {
        for (kind, medium) in media {
            let wanted = s.permission.isGranted && !s.closed && s.subscriptions.values.contains { $0.strategy.medium == kind }
            guard wanted != s.browsing.contains(kind) else { continue }
            if wanted {
                s.browsing.insert(kind)
            } else {
                s.browsing.remove(kind)
                deliver(s.found[kind]?.removeAll() ?? [], medium: kind, in: s)
            }
            medium.setBrowsing(wanted)
        }
    }

    private func permissionChanged(_ permission: NearbyPermission) {
        state.withLock { s in
            guard !s.closed, s.permission != permission else { return }
            let was = s.permission
            s.permission = permission
            if permission.isGranted {
                for (id, publication) in s.publications { media[publication.strategy.medium]?.publish(id: id, message: publication.message) }
                log.info("nearby permission granted: resuming \(s.publications.count) publication(s), \(s.subscriptions.count) subscription(s)")
            } else if was.isGranted {
                for (id, publication) in s.publications { media[publication.strategy.medium]?.withdraw(id: id) }
                log.warning("nearby permission \(permission.word): \(s.publications.count) publication(s) withdrawn and"
                            + " \(s.subscriptions.count) subscription(s) suspended until it is granted again")
            }
            updateBrowsing(&s)
            notify(.permission(permission), in: s)
        }
    }

    private func mediumEvent(_ kind: NearbyMediumKind, _ event: NearbyMediumEvent) {
        state.withLock { s in
            guard !s.closed else { return }
            switch event {
            case .state(let mediumState):
                guard s.mediumStates[kind] != mediumState else { return }
                s.mediumStates[kind] = mediumState
                if mediumState.isAvailable {
                    log.info("the \(kind.rawValue) medium is available")
                } else {
                    log.warning("the \(kind.rawValue) medium is \(mediumState)")
                    deliver(s.found[kind]?.removeAll() ?? [], medium: kind, in: s)
                }
                notify(.medium(kind, mediumState), in: s)
            case .appeared(let instance, let message, let publisher):
                guard s.browsing.contains(kind) else { return }
                let changes = s.found[kind, default: NearbyFoundSet()].appeared(instance, message: message, publisher: publisher)
                deliver(changes, medium: kind, in: s)
            case .disappeared(let instance):
                deliver(s.found[kind]?.disappeared(instance) ?? [], medium: kind, in: s)
            }
        }
    }

    /// Queues the handlers for `changes` (called under the state lock, so deliveries keep their order).
    private func deliver(_ changes: [NearbyFoundSet.Change], medium: NearbyMediumKind, in s: State) {
        for change in changes {
            let sighting: NearbySighting
            let isFound: Bool
            switch change {
            case .found(let message, let publisher):
                sighting = NearbySighting(message: message, medium: medium, publisher: publisher)
                isFound = true
            case .lost(let message, let publisher):
                sighting = NearbySighting(message: message, medium: medium, publisher: publisher)
                isFound = false
            }
            log.info(isFound ? "found \(sighting.message)" : "lost \(sighting.message)",
                     ["medium": .string(medium.rawValue), "publisher": .string(sighting.publisher)])
            for (id, subscription) in s.subscriptions where subscription.strategy.medium == medium && subscription.filter.matches(sighting.message) {
                let handler = isFound ? subscription.found : subscription.lost
                delivery.async { [weak self] in if self?.isActive(id) == true { handler(sighting) } }
            }
        }
    }

    private func notify(_ change: NearbyStatusChange, in s: State) {
        let handlers = s.statusHandlers
        delivery.async { for handler in handlers { handler(change) } }
    }
}

/// An active publication: withdrawn by ``cancel()`` or when the last reference goes.
package final class NearbyPublication: Sendable {
    private weak let manager: NearbyMessagesManager?
    package let id: UInt64

    init(manager: NearbyMessagesManager, id: UInt64) {
        self.manager = manager
        self.id = id
    }

    deinit { manager?.cancelPublication(id) }

    package func cancel() { manager?.cancelPublication(id) }
}

/// An active subscription: ended by ``cancel()`` or when the last reference goes.
package final class NearbySubscription: Sendable {
    private weak let manager: NearbyMessagesManager?
    package let id: UInt64

    init(manager: NearbyMessagesManager, id: UInt64) {
        self.manager = manager
        self.id = id
    }

    deinit { manager?.cancelSubscription(id) }

    package func cancel() { manager?.cancelSubscription(id) }
}
