@testable import CastlineDaemon
import Testing

/// One device's state events: the first at once, then at most one per 100 ms, the newest kept.
@Suite struct StateEventCoalescerTests {
    @Test("a flood of 500 statuses in 0.5 s: events at least 100 ms apart, the last one the newest")
    func flood() {
        var coalescer = StateEventCoalescer<Int>(interval: 0.1)
        var out: [Int] = []
        var times: [Double] = []
        var flushes: [Double] = []
        var now = 0.0
        for i in 0..<500 {
            now = Double(i) * 0.001
            while let at = flushes.first, at <= now {
                flushes.removeFirst()
                if case .emit(let e) = coalescer.due("tv", now: at) { out.append(e); times.append(at) }
            }
            switch coalescer.offer(i, key: "tv", now: now) {
            case .emit: out.append(i); times.append(now)
            case .held(let at): if let at { flushes.append(at) }
            }
        }
        for at in flushes { if case .emit(let e) = coalescer.due("tv", now: at) { out.append(e); times.append(at) } }
        #expect(out.count <= 7, "\(out)")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.1 - 1e-6 }, "\(times)")
        #expect(out.first == 0 && out.last == 499)
        // Every event neither emitted at once nor held last in its window was folded away.
        #expect(coalescer.folded > 480, "\(coalescer.folded)")
    }

    @Test("devices are apart; a quiet device's next event goes at once")
    func apart() {
        var coalescer = StateEventCoalescer<String>(interval: 0.1)
        guard case .emit = coalescer.offer("a1", key: "a", now: 0) else { Issue.record("a1 held"); return }
        guard case .emit = coalescer.offer("b1", key: "b", now: 0.01) else { Issue.record("b1 held"); return }
        guard case .held(flushAt: 0.1?) = coalescer.offer("a2", key: "a", now: 0.05) else { Issue.record("a2 not held"); return }
        guard case .emit("a2") = coalescer.due("a", now: 0.1) else { Issue.record("a2 not flushed"); return }
        guard case .emit = coalescer.offer("a3", key: "a", now: 0.3) else { Issue.record("a3 held"); return }
    }

    @Test("a late flush timer does not send a newer window's event early: events stay 100 ms apart")
    func lateTimer() {
        var coalescer = StateEventCoalescer<String>(interval: 0.1)
        guard case .emit = coalescer.offer("s1", key: "tv", now: 0) else { Issue.record("s1 held"); return }
        guard case .held(flushAt: 0.1?) = coalescer.offer("s2", key: "tv", now: 0.05) else { Issue.record("s2 not held"); return }
        // The timer for 0.1 is late; a status at 0.1001 goes out at once, folding s2 ...
        guard case .emit = coalescer.offer("s3", key: "tv", now: 0.1001) else { Issue.record("s3 held"); return }
        // ... and the next one opens a new window, with its own flush at 0.2001.
        guard case .held(flushAt: let flushAt?) = coalescer.offer("s4", key: "tv", now: 0.12) else { Issue.record("s4 not held"); return }
        #expect(abs(flushAt - 0.2001) < 1e-9)
        // The old timer fires now: too soon after s3, so s4 waits for its window's end.
        guard case .wait(let until) = coalescer.due("tv", now: 0.1002) else { Issue.record("s4 sent 0.1 ms after s3"); return }
        #expect(abs(until - 0.2001) < 1e-9)
        guard case .emit("s4") = coalescer.due("tv", now: 0.2001) else { Issue.record("s4 not flushed at its window's end"); return }
        guard case .none = coalescer.due("tv", now: 0.2002) else { Issue.record("flushed twice"); return }
    }
}
