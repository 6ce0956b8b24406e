import CastCore
@testable import CastProtocol
import Testing

/// A device that floods its broadcasts reaches the session ten times per 100 ms per namespace,
/// its newest state kept; replies always pass. On an explicit clock.
@Suite struct BroadcastFloodStateMachineTests {
    @Test("the first ten broadcasts of a window pass; later ones fold into the newest, delivered at the window's end")
    func folding() {
        var machine = BroadcastFloodStateMachine<Int>(window: 0.1, allowance: 10)
        var passed: [Int] = []
        var deliverAt: Double?
        for i in 0..<1_000 {
            switch machine.arrive(i, namespace: "media", broadcast: true, now: Double(i) * 0.00005) {
            case .pass: passed.append(i)
            case .hold(let at): if let at { deliverAt = at }
            }
        }
        #expect(passed == Array(0..<10))
        #expect(deliverAt == 0.1)
        #expect(machine.due("media", now: 0.1) == 999, "the newest is kept")
        #expect(machine.due("media", now: 0.1) == nil)
        #expect(machine.takeFolded() == 989)
    }

    @Test("a reply always passes and drops a held broadcast of its namespace; namespaces are counted apart")
    func repliesAndNamespaces() {
        var machine = BroadcastFloodStateMachine<String>(window: 0.1, allowance: 1)
        guard case .pass = machine.arrive("s1", namespace: "media", broadcast: true, now: 0) else { Issue.record("first held"); return }
        guard case .hold = machine.arrive("s2", namespace: "media", broadcast: true, now: 0.01) else { Issue.record("second passed"); return }
        guard case .pass = machine.arrive("r1", namespace: "receiver", broadcast: true, now: 0.02) else { Issue.record("other namespace held"); return }
        guard case .pass = machine.arrive("reply", namespace: "media", broadcast: false, now: 0.03) else { Issue.record("reply held"); return }
        #expect(machine.due("media", now: 0.1) == nil, "the reply is newer than the held broadcast")
        guard case .pass = machine.arrive("s3", namespace: "media", broadcast: true, now: 0.2) else { Issue.record("new window held"); return }
        // A broadcast held when a new window lets a newer one pass is dropped, never delivered after it.
        guard case .hold = machine.arrive("s4", namespace: "media", broadcast: true, now: 0.25) else { Issue.record("s4 passed"); return }
        guard case .pass = machine.arrive("s5", namespace: "media", broadcast: true, now: 0.31) else { Issue.record("s5 held"); return }
        #expect(machine.due("media", now: 0.3) == nil)
    }
}
