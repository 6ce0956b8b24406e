#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One sink, its bounded ``SinkQueue`` and the worker thread that drains it.
///
/// Producers only take a short lock to append; the worker is woken only when it is idle, so under
/// load one wake-up carries a whole batch. Flush requests are tickets the worker completes once
/// everything queued before them was written and `sink.flush()` returned.
final class SinkPipeline: @unchecked Sendable {
    let sink: any LogSink
    private let lock = ConditionLock()
    // Guarded by `lock`:
    private var queue: SinkQueue
    private var workerIdle = false
    private var stopping = false
    private var flushRequested: UInt64 = 0
    private var flushCompleted: UInt64 = 0
    private var delivered: UInt64 = 0
    private var thread: pthread_t?

    init(sink: any LogSink, capacity: Int) {
        self.sink = sink
        self.queue = SinkQueue(sinkName: sink.name, capacity: capacity)
        startWorker()
    }

    func enqueue(_ record: LogRecord) {
        lock.lock()
        queue.push(record)
        let wake = workerIdle
        workerIdle = false
        lock.unlock()
        if wake { lock.signal() }
    }

    var statistics: LogSinkStatistics {
        lock.lock()
        defer { lock.unlock() }
        return LogSinkStatistics(name: sink.name, capacity: queue.capacity, queued: queue.count,
                                 delivered: delivered, dropped: queue.totalDrops)
    }

    /// Waits until everything queued so far is written and flushed. False on timeout.
    func flush(timeoutNanos: UInt64) -> Bool {
        let deadline = ConditionLock.monotonicNow() + timeoutNanos
        lock.lock()
        defer { lock.unlock() }
        guard thread != nil else { return true }
        flushRequested += 1
        let ticket = flushRequested
        workerIdle = false
        lock.broadcast()
        while flushCompleted < ticket {
            if !lock.wait(untilMonotonic: deadline), flushCompleted < ticket { return false }
        }
        return true
    }

    /// Drains, flushes and stops the worker. False if it did not stop within the timeout
    /// (the thread is then left detached).
    func stop(timeoutNanos: UInt64) -> Bool {
        let flushed = flush(timeoutNanos: timeoutNanos)
        lock.lock()
        stopping = true
        let t = thread
        thread = nil
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
            thread = t
            lock.unlock()
        } else {
            Unmanaged<SinkPipeline>.fromOpaque(box).release()
        }
    }

    private func run() {
        var batch: [LogRecord] = []
        lock.lock()
        while true {
            while queue.isEmpty, !stopping, flushRequested == flushCompleted {
                workerIdle = true
                lock.wait()
                workerIdle = false
            }
            if !queue.isEmpty {
                queue.drain(into: &batch)
                lock.unlock()
                sink.write(batch)
                let written = UInt64(batch.count)
                batch.removeAll(keepingCapacity: true)
                lock.lock()
                delivered += written
                continue
            }
            if flushRequested > flushCompleted {
                let ticket = flushRequested
                lock.unlock()
                sink.flush()
                lock.lock()
                flushCompleted = ticket
                lock.broadcast()
                continue
            }
            if stopping { break }
        }
        lock.unlock()
    }
}
