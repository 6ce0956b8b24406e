import CastSender
import Testing

@Suite("SenderRig clean-up", .timeLimit(.minutes(1)))
struct SenderRigTests {
    /// A test that stops early (a failed `#require`) leaves its session running. Were the rig to
    /// stop the simulator and the loops first, the session would reconnect on loops that have shut
    /// down: under SWIFTNIO_STRICT (as `make test` runs) that crashed the whole test process.
    @Test("stop ends a session a test left running before the simulator and the loops go")
    func stopEndsLeftSessions() async throws {
        let rig = try await SenderRig.start()
        let manager = rig.manager()
        let session = try await manager.startSession(on: rig.device())
        let discovery = rig.discoveryManager(criteria: .any)
        await discovery.start()
        #expect(await session.state == .connected)
        await rig.stop()
        #expect(session.hasEnded, "the rig ended the session")
        #expect(await session.state.isFinal)
        #expect(await manager.activeSessions.isEmpty)
        #expect(rig.logs.records.contains { $0.className == "CastSession" && $0.message.contains("reconnect") } == false,
                "the session did not try to reconnect: it ended before its device went")
    }
}
