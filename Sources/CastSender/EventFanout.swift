import Synchronization

/// Delivers events to any number of `AsyncStream`s (each subscriber gets every event from the
/// moment it subscribed, buffered up to `bufferLimit` newest, or every one when the limit is nil)
/// and to weakly held listener objects. Thread-safe.
final class EventFanout<Event: Sendable>: Sendable {
    private struct Subscribers {
        var nextID = 0
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())
    private let policy: AsyncStream<Event>.Continuation.BufferingPolicy

    /// `bufferLimit`: the newest events a slow subscriber keeps (older ones are dropped); nil: it
    /// keeps every one (for events that are each a fact no later event repeats).
    init(bufferLimit: Int? = 256) {
        policy = bufferLimit.map { .bufferingNewest($0) } ?? .unbounded
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
            _ = self?.subscribers.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: Event) {
        let targets = subscribers.withLock { Array($0.streams.values) }
        for continuation in targets { continuation.yield(event) }
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
