import Dispatch
import Glibc

/// Waits for termination signals: the default action is replaced by `SIG_IGN` (so the signal
/// can never kill the process from any thread) and a Dispatch signal source reports it.
enum SignalWaiter {
    /// Ignores `signals` so they are only seen through ``wait(_:)``. Call before starting work.
    static func block(_ signals: [Int32]) {
        for number in signals { signal(number, SIG_IGN) }
    }

    /// Suspends until one of `signals` arrives; returns its number.
    static func wait(_ signals: [Int32]) async -> Int32 {
        let queue = DispatchQueue(label: "castline.signals")
        let gate = Gate()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            var sources: [DispatchSourceSignal] = []
            for number in signals {
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    guard gate.open() else { return }
                    continuation.resume(returning: number)
                }
                source.resume()
                sources.append(source)
            }
            gate.keep(sources)
        }
    }

    /// Resumes the continuation once; keeps the sources alive.
    private final class Gate: @unchecked Sendable {
        private var opened = false
        private var sources: [DispatchSourceSignal] = []
        private var lock = pthread_mutex_t()
        init() { pthread_mutex_init(&lock, nil) }
        func keep(_ sources: [DispatchSourceSignal]) {
            pthread_mutex_lock(&lock); self.sources = sources; pthread_mutex_unlock(&lock)
        }
        func open() -> Bool {
            pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }
            if opened { return false }
            opened = true
            return true
        }
    }
}
