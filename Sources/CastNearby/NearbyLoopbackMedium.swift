import CastLogging
import Dispatch
import Synchronization

/// The "air" that in-process loopback media share: a publication of any attached medium is seen by
/// every attached medium that browses. Tests also use it to make the medium unavailable and to
/// make a publisher vanish without withdrawing.
package final class NearbyLoopbackNetwork: Sendable {
    private struct Air {
        var media: [Int: Weak] = [:]
        var publications: [String: (message: NearbyMessage, publisher: String, owner: Int)] = [:]
        var available = true
        var next = 0
    }

    private struct Weak { weak var medium: NearbyLoopbackMedium? }

    private let air = Mutex(Air())

    package init() {}

    /// Makes the medium unavailable (`reason`) or available again (nil) for every attached medium.
    package func setUnavailable(_ reason: String?) {
        let (media, publications) = air.withLock { a in
            a.available = reason == nil
            return (a.media.values.compactMap(\.medium), a.publications)
        }
        for medium in media {
            medium.emit(.state(reason.map { .unavailable($0) } ?? .available))
            if reason == nil, medium.isBrowsing {
                for (instance, p) in publications.sorted(by: { $0.key < $1.key }) {
                    medium.emit(.appeared(instance: instance, message: p.message, publisher: p.publisher))
                }
            }
        }
    }

    var isAvailable: Bool { air.withLock { $0.available } }

    func attach(_ medium: NearbyLoopbackMedium) -> Int {
        air.withLock { a in
            a.next += 1
            a.media[a.next] = Weak(medium: medium)
            return a.next
        }
    }

    func detach(_ token: Int) {
        let gone = air.withLock { a -> [String] in
            a.media.removeValue(forKey: token)
            let mine = a.publications.filter { $0.value.owner == token }.map(\.key)
            for key in mine { a.publications.removeValue(forKey: key) }
            return mine
        }
        for instance in gone { broadcast(.disappeared(instance: instance)) }
    }

    func publish(_ instance: String, message: NearbyMessage, publisher: String, owner: Int) {
        let available = air.withLock { a -> Bool in
            a.publications[instance] = (message, publisher, owner)
            return a.available
        }
        if available { broadcast(.appeared(instance: instance, message: message, publisher: publisher)) }
    }

    func withdraw(_ instance: String) {
        let removed = air.withLock { $0.publications.removeValue(forKey: instance) != nil && $0.available }
        if removed { broadcast(.disappeared(instance: instance)) }
    }

    /// Every publication now visible, for a medium that starts browsing.
    func visible() -> [(String, NearbyMessage, String)] {
        air.withLock { a in
            guard a.available else { return [] }
            return a.publications.sorted { $0.key < $1.key }.map { ($0.key, $0.value.message, $0.value.publisher) }
        }
    }

    private func broadcast(_ event: NearbyMediumEvent) {
        let media = air.withLock { $0.media.values.compactMap(\.medium) }
        for medium in media where medium.isBrowsing { medium.emit(event) }
    }
}

/// An in-process medium attached to a ``NearbyLoopbackNetwork``.
package final class NearbyLoopbackMedium: NearbyMedium, @unchecked Sendable {
    package let kind = NearbyMediumKind.loopback
    /// The publisher name sightings of this medium's publications carry.
    package let name: String
    private let network: NearbyLoopbackNetwork
    private let queue = DispatchQueue(label: "castline.nearby.loopback")
    private let log: Logger
    private let browsing = Mutex(false)
    /// Bumped when browsing stops: events of an earlier browse still queued are dropped.
    private let generation = Mutex<UInt64>(0)
    private let handler = Mutex<(@Sendable (NearbyMediumEvent) -> Void)?>(nil)
    private let token = Mutex<Int?>(nil)

    package init(network: NearbyLoopbackNetwork, name: String, logSystem: LogSystem) {
        self.network = network
        self.name = name
        log = Logger(class: "NearbyLoopbackMedium", system: logSystem)
    }

    package var state: NearbyMediumState { network.isAvailable ? .available : .unavailable("the loopback network is down") }

    var isBrowsing: Bool { browsing.withLock { $0 } }

    package func start(_ events: @escaping @Sendable (NearbyMediumEvent) -> Void) {
        handler.withLock { $0 = events }
        let attached = network.attach(self)
        token.withLock { $0 = attached }
    }

    package func publish(id: UInt64, message: NearbyMessage) {
        guard let owner = token.withLock({ $0 }) else { return }
        log.debug("publish", ["instance": .string(instance(id))])
        network.publish(instance(id), message: message, publisher: name, owner: owner)
    }

    package func withdraw(id: UInt64) { network.withdraw(instance(id)) }

    package func setBrowsing(_ on: Bool) {
        browsing.withLock { $0 = on }
        guard on else {
            generation.withLock { $0 &+= 1 }
            return
        }
        for (instance, message, publisher) in network.visible() {
            emit(.appeared(instance: instance, message: message, publisher: publisher))
        }
    }

    /// Like a publisher's power loss: its publications disappear without a withdraw from the
    /// manager, and this medium stops taking part.
    package func vanish() { stop() }

    package func stop() {
        browsing.withLock { $0 = false }
        handler.withLock { $0 = nil }
        if let attached = token.withLock({ t -> Int? in defer { t = nil }; return t }) { network.detach(attached) }
    }

    func emit(_ event: NearbyMediumEvent) {
        guard let handler = handler.withLock({ $0 }) else { return }
        if case .state = event {
            queue.async { handler(event) }
            return
        }
        let at = generation.withLock { $0 }
        queue.async { [weak self] in if self?.generation.withLock({ $0 }) == at { handler(event) } }
    }

    private func instance(_ id: UInt64) -> String { "\(name)/\(String(id, radix: 16))" }
}
