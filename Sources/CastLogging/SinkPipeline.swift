#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One sink, its bounded ``SinkQueue`` and the worker thread that drains it.
///
/// Producers only take a short lock to append; the worker is woken only when it is idle, and after
/// a wake-up it lingers ``lingerNanos`` before draining, so one wake-up (one futex call on the
/// producer's side) carries a whole batch instead of one record. Flush requests are tickets the worker completes once
/// everything queued before them was written and `sink.flush()` returned.
final class SinkPipeline: @unchecked Sendable {
    let sink: any LogSink
    /// How long the worker waits after a wake-up before it drains: bounds the added latency.
    static let lingerNanos: UInt64 = 200_000
    private let lock = ConditionLock()

    /// Everything guarded by `lock`. Held behind a pointer: the lock already serializes access,
    /// and this keeps Swift's dynamic exclusivity checks off the logging hot path.
    private struct State {
        var queue: SinkQueue
        var workerIdle = false
        var stopping = false
        var flushRequested: UInt64 = 0
        var flushCompleted: UInt64 = 0
        var delivered: UInt64 = 0
        var thread: pthread_t?
    }
    private let state: UnsafeMutablePointer<State>

    init(sink: any LogSink, capacity: Int) {
        self.sink = sink
        state = .allocate(capacity: 1)
        state.initialize(to: State(queue: SinkQueue(sinkName: sink.name, capacity: capacity)))
        startWorker()
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    func enqueue(_ record: consuming LogRecord) {
        lock.lock()
        state.pointee.queue.push(record)
        let wake = state.pointee.workerIdle
        state.pointee.workerIdle = false
        lock.unlock()
        if wake { lock.signal() }
    }

    var statistics: LogSinkStatistics {
        lock.lock()
        defer { lock.unlock() }
        return LogSinkStatistics(name: sink.name, capacity: state.pointee.queue.capacity, queued: state.pointee.queue.count,
                                 delivered: state.pointee.delivered, dropped: state.pointee.queue.totalDrops &+ sink.discarded)
    }

    /// Waits until everything queued so far is written and flushed. False on timeout.
    func flush(timeoutNanos: UInt64) -> Bool {
        let deadline = ConditionLock.monotonicNow() + timeoutNanos
        lock.lock()
        defer { lock.unlock() }
        guard state.pointee.thread != nil else { return true }
        state.pointee.flushRequested += 1
        let ticket = state.pointee.flushRequested
        state.pointee.workerIdle = false
        lock.broadcast()
        while state.pointee.flushCompleted < ticket {
            if !lock.wait(untilMonotonic: deadline), state.pointee.flushCompleted < ticket { return false }
        }
        return true
    }

    /// Drains, flushes and stops the worker. False if it did not stop within the timeout
    /// (the thread is then left detached).
    func stop(timeoutNanos: UInt64) -> Bool {
        let flushed = flush(timeoutNanos: timeoutNanos)
        lock.lock()
        state.pointee.stopping = true
        let t = state.pointee.thread
        state.pointee.thread = nil
        lock.broadcast()
        lock.unlock()
        guard let t else { return flushed }
        if flushed {
            pthread_join(t, nil)
        } else {
            pthread_detach(t)
        }
        return flushed
    }

    private func startWorker() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { raw in
            let pipeline = Unmanaged<SinkPipeline>.fromOpaque(raw!).takeRetainedValue()
            pipeline.run()
            return nil
        }, box)
        if rc == 0 {
            lock.lock()
            state.pointee.thread = t
            lock.unlock()
        } else {
            Unmanaged<SinkPipeline>.fromOpaque(box).release()
        }
    }

    private func run() {
        var batch: [LogRecord] = []
        lock.lock()
        while true {
            var slept = false
            while state.pointee.queue.isEmpty, !state.pointee.stopping, state.pointee.flushRequested == state.pointee.flushCompleted {
                state.pointee.workerIdle = true
                lock.wait()
                state.pointee.workerIdle = false
                slept = true
            }
            if slept, !state.pointee.stopping, state.pointee.flushRequested == state.pointee.flushCompleted {
                lock.unlock()
                var pause = timespec(tv_sec: 0, tv_nsec: Int(SinkPipeline.lingerNanos))
                nanosleep(&pause, nil)
                lock.lock()
            }
            if !state.pointee.queue.isEmpty {
                state.pointee.queue.drain(into: &batch)
                lock.unlock()
                let written = UInt64(batch.count)
                sink.take(&batch)
                batch.removeAll(keepingCapacity: true)
                lock.lock()
                state.pointee.delivered += written
                continue
            }
            if state.pointee.flushRequested > state.pointee.flushCompleted {
                let ticket = state.pointee.flushRequested
                lock.unlock()
                sink.flush()
                lock.lock()
                state.pointee.flushCompleted = ticket
                lock.broadcast()
                continue
            }
            if state.pointee.stopping { break }
        }
        lock.unlock()
    }
}
