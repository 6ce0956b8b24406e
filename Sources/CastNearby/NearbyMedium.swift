/// What a medium reports to its manager.
package enum NearbyMediumEvent: Sendable, Equatable {
    case state(NearbyMediumState)
    /// A publication became visible (or its content changed). `instance` is unique within the medium.
    case appeared(instance: String, message: NearbyMessage, publisher: String)
    case disappeared(instance: String)
}

/// A way for nearby messages to travel: the LAN through avahi-daemon (``NearbyAvahiMedium``)
/// or in-process (``NearbyLoopbackMedium``).
///
/// Contract: events are delivered one at a time, in order, on the medium's own queue, never while
/// the medium holds a lock its methods take (so a handler may call back into the medium). When
/// the medium becomes unavailable, every instance it reported is gone (no `disappeared` events
/// follow) and it reports them again as `appeared` when it is back.
package protocol NearbyMedium: AnyObject, Sendable {
    var kind: NearbyMediumKind { get }
    var state: NearbyMediumState { get }
    func start(_ events: @escaping @Sendable (NearbyMediumEvent) -> Void)
    /// Publishes (or replaces) publication `id`. Kept across medium outages and re-published.
    func publish(id: UInt64, message: NearbyMessage)
    func withdraw(id: UInt64)
    /// Starts or stops looking for publications. Stopping forgets every instance (no events).
    func setBrowsing(_ browsing: Bool)
    /// Withdraws everything and releases the medium's resources.
    func stop()
}
