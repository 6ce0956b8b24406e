import CastLogging
import Synchronization

/// Delivers events to any number of `AsyncStream`s (each subscriber gets every event from the
/// moment it subscribed, buffered up to `bufferLimit` newest, or every one when the limit is nil)
/// and to weakly held listener objects. Thread-safe.
///
/// A subscriber that falls `bufferLimit` events behind loses the oldest, and that is never
/// silent: the owner's logger (``report(to:)``) gets a warning at the 1st, 10th, 100th … event
/// that subscriber lost, with the count so far.
final class EventFanout<Event: Sendable>: Sendable {
    private struct Subscribers {
        var nextID = 0
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var dropped: [Int: Int] = [:]
        var finished = false
        var log: Logger?
    }

    private let subscribers: Mutex<Subscribers>
    private let policy: AsyncStream<Event>.Continuation.BufferingPolicy
    private let label: String
    private let bufferLimit: Int?

    /// `label`: what the events are, for the warning (`session updates`, `media status`).
    /// `bufferLimit`: the newest events a slow subscriber keeps (older ones are dropped); nil: it
    /// keeps every one (for events that are each a fact no later event repeats). `log`: where a
    /// drop is reported (or later, ``report(to:)``).
    init(_ label: String, bufferLimit: Int? = 256, log: Logger? = nil) {
        self.label = label
        self.bufferLimit = bufferLimit
        policy = bufferLimit.map { .bufferingNewest($0) } ?? .unbounded
        subscribers = Mutex(Subscribers(log: log))
    }

    /// Where drops are reported from now on.
    func report(to log: Logger) {
        subscribers.withLock { $0.log = log }
    }

    /// A new stream of events; it ends when the fanout is finished or the consumer stops.
    func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: policy)
        let id: Int? = subscribers.withLock { state in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.streams[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()   // nothing more will come
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { state in
                state.dropped[id] = nil
                return state.streams.removeValue(forKey: id)
            }
        }
        return stream
    }

    func emit(_ event: Event) {
        let targets = subscribers.withLock { Array($0.streams) }
        for (id, continuation) in targets {
            if case .dropped = continuation.yield(event) { dropped(by: id) }
        }
    }

    /// Counts an event the subscriber `id` lost, and warns at 1, 10, 100 … lost.
    private func dropped(by id: Int) {
        let (count, log) = subscribers.withLock { state -> (Int, Logger?) in
            let count = (state.dropped[id] ?? 0) + 1
            state.dropped[id] = count
            return (count, state.log)
        }
        guard Self.isReported(count), let log else { return }
        log.warning("a subscriber to \(label) fell \(bufferLimit ?? 0) events behind: \(count) oldest event(s) dropped so far", [
            "events": .string(label), "dropped": .int(count), "bufferLimit": .int(bufferLimit ?? 0),
        ])
    }

    /// Whether the `count`th lost event is reported: 1, 10, 100, … (a subscriber that stays behind
    /// is a handful of records, not one per event).
    static func isReported(_ count: Int) -> Bool {
        var power = 1
        while power < count { power *= 10 }
        return power == count
    }

    /// Ends every stream; later ``stream()`` calls return finished streams.
    func finish() {
        let targets = subscribers.withLock { state in
            state.finished = true
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

/// Weakly held listener objects (the iOS SDK holds listeners weakly too). Thread-safe.
final class WeakListeners<Listener: Sendable>: Sendable {
    private struct Entry: @unchecked Sendable {
        weak var object: AnyObject?
    }

    private let entries = Mutex<[Entry]>([])

    func add(_ listener: Listener) {
        let object = listener as AnyObject
        entries.withLock { list in
            list.removeAll { $0.object == nil || $0.object === object }
            list.append(Entry(object: object))
        }
    }

    func remove(_ listener: Listener) {
        let object = listener as AnyObject
        entries.withLock { list in list.removeAll { $0.object == nil || $0.object === object } }
    }

    /// The live listeners, in the order they were added.
    var current: [Listener] {
        entries.withLock { list in list.compactMap { $0.object as? Listener } }
    }
}
