import CastNearby
import CastTestSupport
import Synchronization

/// Collects what a manager's handlers deliver; `wait` polls (every 10 ms, at most `seconds`).
final class NearbyTestRecorder: Sendable {
    enum Event: Equatable, Sendable {
        case found(String)
        case lost(String)
        case expired
        case status(NearbyStatusChange)
    }

    private let events = Mutex<[Event]>([])

    var all: [Event] { events.withLock { $0 } }

    func add(_ event: Event) { events.withLock { $0.append(event) } }

    var found: @Sendable (NearbySighting) -> Void { { [self] in add(.found($0.message.text ?? "?")) } }
    var lost: @Sendable (NearbySighting) -> Void { { [self] in add(.lost($0.message.text ?? "?")) } }

    /// True once `predicate` holds for the events so far.
    func wait(seconds: Double = 5, until predicate: ([Event]) -> Bool) -> Bool {
        pollUntilBlocking(timeout: seconds) { predicate(all) }
    }

    func count(_ event: Event) -> Int { all.filter { $0 == event }.count }
}
