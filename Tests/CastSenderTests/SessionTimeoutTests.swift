import Glibc
import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import CastSender
import CastTransport
import Synchronization
import SystemCrypto
import Testing

/// Tests that wait for a request timeout to elapse on the real clock (sleeps included): to be
/// moved onto a controllable clock with the CastSender/CastTransport refactoring, kept here
/// as they were until then.
extension SessionIntegrationTests {
    @Test("request timeouts share one timer per session: after it fires for the first request, later ones still time out")
    func requestTimeoutsShareOneTimer() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        // Timeouts of seconds, not tenths: the LOAD below must time out well before the first
        // request even on a loaded machine (1.6 s apart).
        let (manager, session) = try await Self.startSession(rig) { $0.requestTimeout = 2 }
        let client = session.remoteMediaClient
        // The start's requests armed the timer for 2 s after them: let it fire (nothing pending
        // afterwards, so nothing is armed).
        try await Task.sleep(for: .milliseconds(2300))
        try await rig.control(["command": "delay", "device": 0, "seconds": 6])
        let started = MonotonicClock.seconds()
        let first = await client.requestStatus()
        try await Task.sleep(for: .milliseconds(300))
        let second = await client.requestStatus()
        // A shorter timeout than the one pending arms the timer sooner.
        let media = MediaInformation(contentId: Self.movie, contentType: "video/mp4")
        let shortest = await client.load(media, options: MediaLoadOptions(timeout: 0.1))
        guard case .failure(.timedOut) = await shortest.result else { Issue.record("LOAD: \(await shortest.result)"); return }
        // Its deadline (0.4 s) is before the first request's (2 s): the first is still waiting
        // (with one timer left armed for 2 s, the LOAD would have ended with it).
        #expect(first.completedResult == nil, "the 0.1 s LOAD waited for the 2 s timer")
        // Polled, bounded: a timer that is not re-armed would leave the second waiting forever.
        for _ in 0..<100 where second.completedResult == nil { try await Task.sleep(for: .milliseconds(50)) }
        guard case .failure(.timedOut)? = first.completedResult else { Issue.record("first: \(String(describing: first.completedResult))"); return }
        guard case .failure(.timedOut)? = second.completedResult else { Issue.record("second: \(String(describing: second.completedResult))"); return }
        let elapsed = MonotonicClock.seconds() - started
        #expect(elapsed >= 2.2, "the second request timed out before its own deadline (\(elapsed) s)")
        try await rig.control(["command": "delay", "device": 0, "seconds": 0])
        await manager.endAll(stopCasting: true)
    }
}
