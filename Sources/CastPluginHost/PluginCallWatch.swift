import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The time bound on the calls into one plugin instance (a channel, a log sink): each call is
/// bracketed by ``begin(_:)`` and ``end()``, and a call still running past ``bound`` is an
/// overrun. The first overrun is reported once, to the handler given at ``arm(_:)``, from the
/// thread that noticed it (the ``PluginWatchdog``); from then on the watch is ``tripped`` and
/// ``begin(_:)`` refuses every further call, so the instance is never called again once it
/// overran. ``runBounded(_:on:_:)`` waits for a call with the same bound, queued work ahead of it
/// included.
///
/// The clock is a parameter: tests drive ``check(now:)`` with their own time. Thread-safe.
final class PluginCallWatch: Sendable {
    /// A call that did not return within the bound.
    struct Overrun: Sendable, Equatable {
        /// The callback's name as the ABI spells it (`on_message`, `write`, `close`…).
        let call: String
        /// The bound, seconds.
        let bound: Double
        /// Seconds the call had run (or been waited for) when the overrun was noticed.
        let elapsed: Double
    }

    let bound: Double
    private let boundNanos: UInt64
    private let clock: @Sendable () -> UInt64
    private let state = Mutex(State())

    private struct State {
        var call: String?
        var started: UInt64 = 0
        var overrun: Overrun?
        var handler: (@Sendable (Overrun) -> Void)?
        /// A ``runBounded(_:on:_:)`` waiting for its call.
        var waiter: Waiter?
    }

    private struct Waiter {
        let call: String
        let deadline: UInt64
        let resume: ResumeOnce
    }

    /// `clock` gives monotonic nanoseconds. `watched`: checked by ``PluginWatchdog/shared``
    /// (tests of the watch itself call ``check(now:)`` instead).
    init(bound: Double, clock: @escaping @Sendable () -> UInt64 = MonotonicDeadline.now, watched: Bool = true) {
        self.bound = bound
        boundNanos = UInt64(max(bound, 0) * 1e9)
        self.clock = clock
        if watched { PluginWatchdog.shared.add(self) }
    }

    deinit { PluginWatchdog.shared.remove(self) }

    /// What to do on the first overrun (log, disable, close); set once the instance exists.
    func arm(_ handler: @escaping @Sendable (Overrun) -> Void) {
        state.withLock { $0.handler = handler }
    }

    /// True while a ``runBounded(_:on:_:)`` waits for its call.
    var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// The call running now, nil between calls.
    var inProgress: String? { state.withLock { $0.call } }

    /// The overrun that tripped the watch, nil while every call kept its bound.
    var tripped: Overrun? { state.withLock { $0.overrun } }

    /// Starts a call; false (do not call the plugin) once the watch has tripped.
    func begin(_ call: String) -> Bool {
        let now = clock()
        return state.withLock { s in
            guard s.overrun == nil else { return false }
            s.call = call
            s.started = now
            return true
        }
    }

    /// Ends the call begun last.
    func end() {
        state.withLock { $0.call = nil }
    }

    /// Runs `body` as the call `call` unless the watch has tripped; false when it was skipped.
    @discardableResult
    func run(_ call: String, _ body: () -> Void) -> Bool {
        guard begin(call) else { return false }
        body()
        end()
        return true
    }

    /// Trips the watch if the call in progress, or the call a ``runBounded(_:on:_:)`` waits
    /// for, has run past the bound at `now`. True when this check tripped it (the handler ran).
    @discardableResult
    func check(now: UInt64) -> Bool {
        let fired = state.withLock { s -> (Overrun, (@Sendable (Overrun) -> Void)?, ResumeOnce?)? in
            guard s.overrun == nil else { return nil }
            let call: String, since: UInt64
            if let running = s.call, now >= s.started, now - s.started >= boundNanos {
                (call, since) = (running, s.started)
            } else if let waiter = s.waiter, now >= waiter.deadline {
                (call, since) = (waiter.call, waiter.deadline &- boundNanos)
            } else {
                return nil
            }
            let overrun = Overrun(call: call, bound: bound, elapsed: Double(now &- since) / 1e9)
            s.overrun = overrun
            defer { s.waiter = nil }
            return (overrun, s.handler, s.waiter?.resume)
        }
        guard let (overrun, handler, waiter) = fired else { return false }
        handler?(overrun)
        waiter?.resume(false)
        return true
    }

    /// Trips the watch for `call` (a caller's own bounded wait gave up on it); false if it had
    /// tripped already.
    @discardableResult
    func trip(_ call: String) -> Bool {
        let fired = state.withLock { s -> (Overrun, (@Sendable (Overrun) -> Void)?, ResumeOnce?)? in
            guard s.overrun == nil else { return nil }
            let overrun = Overrun(call: call, bound: bound, elapsed: bound)
            s.overrun = overrun
            defer { s.waiter = nil }
            return (overrun, s.handler, s.waiter?.resume)
        }
        guard let (overrun, handler, waiter) = fired else { return false }
        handler?(overrun)
        waiter?.resume(false)
        return true
    }

    /// Checks with the watch's own clock.
    @discardableResult
    func check() -> Bool { check(now: clock()) }

    /// Runs `body` as the call `call` on `queue` and waits for it at most the bound (queued work
    /// ahead of it included). True when it ran and returned in time; false when it was skipped
    /// (the watch had tripped) or did not return in time: the watch is then tripped, and `body`
    /// is skipped if the queue ever gets to it.
    func runBounded(_ call: String, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) async -> Bool {
        guard tripped == nil else { return false }
        return await withCheckedContinuation { continuation in
            let resume = ResumeOnce(continuation)
            let deadline = clock() &+ boundNanos
            state.withLock { $0.waiter = Waiter(call: call, deadline: deadline, resume: resume) }
            queue.async {
                let ran = self.run(call, body)
                self.state.withLock { s in if s.waiter?.resume === resume { s.waiter = nil } }
                resume.resume(ran)
            }
        }
    }
}

/// Resumes a continuation once, whichever of two threads comes first.
final class ResumeOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>

    init(_ continuation: CheckedContinuation<Bool, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: Bool) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

/// Checks every live ``PluginCallWatch`` from one thread of its own, every tick (a tenth of the
/// smallest bound, between 10 ms and 250 ms): a call that overran is noticed within its bound
/// plus one tick. A thread, not a dispatch queue: the calls it watches may hold dispatch's
/// worker threads. It starts with the first watch and then stays, asleep between ticks.
final class PluginWatchdog: Sendable {
    static let shared = PluginWatchdog()

    private struct Entry {
        weak var watch: PluginCallWatch?
    }

    private struct State {
        var watches: [ObjectIdentifier: Entry] = [:]
        var started = false
        var tickNanos: UInt64 = 250_000_000
    }

    private let state = Mutex(State())

    func add(_ watch: PluginCallWatch) {
        let tick = UInt64(min(max(watch.bound / 10, 0.01), 0.25) * 1e9)
        let start = state.withLock { s -> Bool in
            s.watches[ObjectIdentifier(watch)] = Entry(watch: watch)
            s.tickNanos = min(s.tickNanos, tick)
            defer { s.started = true }
            return !s.started
        }
        if start { startThread() }
    }

    func remove(_ watch: PluginCallWatch) {
        state.withLock { s in _ = s.watches.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    private func startThread() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let watchdog = Unmanaged<PluginWatchdog>.fromOpaque(raw!).takeRetainedValue()
            watchdog.loop()
            return nil
        }, box)
        if rc == 0 { pthread_detach(thread) } else { Unmanaged<PluginWatchdog>.fromOpaque(box).release() }
    }

    private func loop() {
        while true {
            let (watches, tick) = state.withLock { s -> ([PluginCallWatch], UInt64) in
                s.watches = s.watches.filter { $0.value.watch != nil }
                return (s.watches.values.compactMap(\.watch), s.tickNanos)
            }
            for watch in watches { watch.check() }
            var pause = timespec(tv_sec: Int(tick / 1_000_000_000), tv_nsec: Int(tick % 1_000_000_000))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 { pause = left }
        }
    }
}
