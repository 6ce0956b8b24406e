import Dispatch
import Glibc
import Synchronization

/// Waits for termination signals: the default action is replaced by `SIG_IGN` (so the signal
/// can never kill the process from any thread) and a Dispatch signal source reports it.
///
/// The sources are installed by ``block(_:)``, and a signal that arrives before ``wait(_:)`` is
/// kept for it: a supervisor's SIGTERM sent right after `castline sim` printed its ready line
/// (or a Ctrl-C while `castline cast` connects) used to land between the two, where the signal
/// was ignored and lost, and the process never stopped.
///
/// A termination signal is final: once one arrived, every wait for it returns at once, and all
/// the tasks waiting when it arrives are woken (several devices followed at once each wait).
enum SignalWaiter {
    private struct State: ~Copyable {
        var watched: [Int32: DispatchSourceSignal] = [:]
        var arrived: [Int32] = []
        var waiters: [(signals: [Int32], continuation: CheckedContinuation<Int32, Never>)] = []
    }

    private static let state = Mutex(State())
    private static let queue = DispatchQueue(label: "castline.signals")

    /// Ignores `signals` so they are only seen through ``wait(_:)``, and starts listening for
    /// them. Call before starting work.
    static func block(_ signals: [Int32]) {
        state.withLock { state in
            for number in signals where state.watched[number] == nil {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { arrive(number) }
                source.resume()
                state.watched[number] = source
            }
        }
    }

    /// Suspends until one of `signals` arrives, or returns at once if one already did since
    /// ``block(_:)``; its number.
    static func wait(_ signals: [Int32]) async -> Int32 {
        block(signals)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let early: Int32? = state.withLock { state in
                if let number = state.arrived.first(where: signals.contains) { return number }
                state.waiters.append((signals, continuation))
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    private static func arrive(_ number: Int32) {
        let woken: [CheckedContinuation<Int32, Never>] = state.withLock { state in
            state.arrived.append(number)
            let woken = state.waiters.filter { $0.signals.contains(number) }.map(\.continuation)
            state.waiters.removeAll { $0.signals.contains(number) }
            return woken
        }
        for continuation in woken { continuation.resume(returning: number) }
    }
}
