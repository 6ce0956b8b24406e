import CastCore
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The hub's event stream: session, job, device, media, channel and logging events, each one
/// JSON object, to every subscriber (`GET /v1/events`, the MQTT bridge). Thread-safe.
///
/// Each subscriber has a bounded buffer (``bufferSize``): a subscriber that does not keep up
/// loses its oldest events, and the next event it gets says how many (`"lost": N`), never silently.
/// State events of one device (``emitState(_:_:device:_:)``: its media, its status) come at most
/// once per 100 ms, the newest kept (``StateEventCoalescer``).
package final class HubEvents: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        case session, job, device, media, channel, logging
    }

    package struct Event: Sendable {
        /// Increases by one per event, across kinds (a gap means events were lost).
        package let sequence: Int
        /// Unix seconds.
        package let time: Double
        package let kind: Kind
        package let type: String
        package let device: String?
        package let job: String?
        package let fields: [String: JSONValue]

        package var json: JSONValue {
            var object = JSONObject()
            object.set("seq", .int(Int64(sequence)))
            object.set("time", .double((time * 1000).rounded() / 1000))
            object.set("kind", .string(kind.rawValue))
            object.set("type", .string(type))
            if let device { object.set("device", .string(device)) }
            if let job { object.set("job", .string(job)) }
            for key in fields.keys.sorted() { object.set(key, fields[key]!) }
            return .object(object)
        }
    }

    /// One subscriber's events: iterate ``events``; ``cancel()`` (or dropping it) unsubscribes.
    package final class Subscription: Sendable {
        package let events: AsyncStream<Event>
        let id: Int
        private let hub: HubEvents

        init(events: AsyncStream<Event>, id: Int, hub: HubEvents) {
            self.events = events
            self.id = id
            self.hub = hub
        }

        package func cancel() { hub.unsubscribe(id) }
        deinit { hub.unsubscribe(id) }
    }

    private struct Subscriber {
        let kinds: Set<Kind>
        let continuation: AsyncStream<Event>.Continuation
        var lost = 0
    }

    private struct State {
        var sequence = 0
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
    }

    package static let bufferSize = 1_024
    private let state = Mutex(State())
    private let coalescer = Mutex(StateEventCoalescer<(kind: Kind, type: String, fields: [String: JSONValue])>())
    /// Sees every event as it is emitted, subscribers or not, and never loses one (the daemon's
    /// per-device metrics, ``DeviceMetrics``). It must not block.
    package typealias Tap = @Sendable (_ kind: Kind, _ type: String, _ device: String?, _ fields: [String: JSONValue], _ time: Double) -> Void
    private let tap: Tap?

    package init(tap: Tap? = nil) { self.tap = tap }

    /// Publishes a device's state event: at once, unless one for the same device and kind went
    /// out less than 100 ms ago; then the newest is held and goes out at the window's end.
    package func emitState(_ kind: Kind, _ type: String, device: String, _ fields: [String: JSONValue] = [:]) {
        let key = "\(kind.rawValue)\u{0}\(device)"
        let now = Self.monotonicNow()
        let decision = coalescer.withLock { $0.offer((kind, type, fields), key: key, now: now) }
        switch decision {
        case .emit:
            emit(kind, type, device: device, fields)
        case .held(let flushAt?):
            flush(key, device: device, at: flushAt, now: now)
        case .held(nil):
            break
        }
    }

    /// The held state event of `key` goes out at `at` (later, if an event sent at once has
    /// opened a new window since).
    private func flush(_ key: String, device: String, at: Double, now: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, at - now) * 1e9))) { [weak self] in
            guard let self else { return }
            let now = Self.monotonicNow()
            switch self.coalescer.withLock({ $0.due(key, now: now) }) {
            case .emit(let held): self.emit(held.kind, held.type, device: device, held.fields)
            case .wait(let until): self.flush(key, device: device, at: until, now: now)
            case .none: break
            }
        }
    }

    /// State events folded into newer ones since start.
    package var foldedStateEvents: Int { coalescer.withLock { $0.folded } }

    static func monotonicNow() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Publishes one event to every subscriber of its kind.
    package func emit(_ kind: Kind, _ type: String, device: String? = nil, job: String? = nil, _ fields: [String: JSONValue] = [:]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        tap?(kind, type, device, fields, Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
        state.withLock { state in
            state.sequence += 1
            guard !state.subscribers.isEmpty else { return }
            var event = Event(sequence: state.sequence, time: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9, kind: kind,
                              type: type, device: device, job: job, fields: fields)
            for (id, subscriber) in state.subscribers where subscriber.kinds.contains(kind) {
                if subscriber.lost > 0 {
                    var noted = fields
                    noted["lost"] = .int(Int64(subscriber.lost))
                    event = Event(sequence: event.sequence, time: event.time, kind: kind, type: type, device: device, job: job, fields: noted)
                }
                switch subscriber.continuation.yield(event) {
                case .dropped: state.subscribers[id]?.lost += 1
                case .enqueued: state.subscribers[id]?.lost = 0
                case .terminated: state.subscribers[id] = nil
                @unknown default: break
                }
            }
        }
    }

    /// A subscription to `kinds` (all when nil), from now on.
    package func subscribe(_ kinds: Set<Kind>? = nil) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(kinds: kinds ?? Set(Kind.allCases), continuation: continuation)
            return state.nextID
        }
        return Subscription(events: stream, id: id, hub: self)
    }

    /// Subscribers now (metrics, tests).
    package var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    fileprivate func unsubscribe(_ id: Int) {
        let gone = state.withLock { $0.subscribers.removeValue(forKey: id) }
        gone?.continuation.finish()
    }
}
