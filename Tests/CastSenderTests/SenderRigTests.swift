import CastTestSupport
@testable import CastSender
import Testing

@Suite("SenderRig clean-up", .timeLimit(.minutes(1)))
struct SenderRigTests {
    /// A test that stops early (a failed `#require`) leaves its session running. Were the rig to
    /// stop the simulator and the loops first, the session would reconnect on loops that have shut
    /// down: under SWIFTNIO_STRICT (as `make test` runs) that crashed the whole test process.
    @Test("stop ends a session a test left running before the simulator and the loops go")
    func stopEndsLeftSessions() async throws {
        try await withSenderRig { rig in
            let manager = rig.manager()
            let session = try await manager.startSession(on: rig.device())
            let discovery = rig.discoveryManager(criteria: .any)
            await discovery.start()
            #expect(await session.state == .connected)
            await rig.stop()
            #expect(session.hasEnded, "the rig ended the session")
            #expect(await session.state.isFinal)
            #expect(await manager.activeSessions.isEmpty)
            #expect(rig.logRecords.contains { $0.className == "CastSession" && $0.message.contains("reconnect") } == false,
                    "the session did not try to reconnect: it ended before its device went")
        }
    }
}

@Suite("Ending a session while it connects", .timeLimit(.minutes(1)))
struct EndWhileConnectingTests {
    /// Runs `body` with a rig, a device whose TLS never answers (a connect to it waits in its
    /// handshake) and a manager whose connect timeout (40 s) is far beyond what a test waits; the
    /// rig is stopped afterwards, also when `body` throws.
    static func withStalledDevice(_ body: (SenderRig, SilentListener, SessionManager, CastDevice) async throws -> Void)
        async throws {
        try await withSenderRig { rig in
            let listener = try await SilentListener.start(group: rig.group)
            rig.atStop { await listener.stop() }
            let manager = rig.manager { $0.connectTimeout = 40 }
            try await body(rig, listener, manager,
                           CastDevice(id: "stalled-tls", friendlyName: "Stalled", host: "127.0.0.1", port: listener.port))
        }
    }

    /// Before, `end()` (and so `shutdown()`) returned while the connect went on until its timeout,
    /// and then touched a group the manager had shut down (a crash under SWIFTNIO_STRICT).
    @Test("shutdown during a start stuck in TLS: the connect gives up before shutdown returns, the start fails cancelled")
    func shutdownDuringStart() async throws {
        try await Self.withStalledDevice { rig, listener, manager, stalled in
            let start = Task { () throws(CastSessionError) -> CastSession in try await manager.startSession(on: stalled) }
            #expect(await listener.wait { $0.accepted == 1 }, "the start reached the listener")
            let session = try #require(await manager.activeSessions[stalled.id])

            await manager.shutdown()
            // No attempt is left once shutdown has returned; the start has already failed.
            #expect(await session.openAttempts.isEmpty)
            #expect(await session.state == .failed(.cancelled))
            let result = await start.result
            #expect(throws: CastSessionError.cancelled) { try result.get() }
            #expect(await listener.wait { $0.closedByPeer == 1 }, "the socket was closed")
            #expect(rig.logRecords.contains { $0.className == "CastSession" && $0.message.contains("to give up") })

            // A shut-down manager starts nothing more.
            await #expect(throws: CastSessionError.cancelled) { _ = try await manager.startSession(on: rig.device()) }
        }
    }
}

extension EndWhileConnectingTests {
    /// A transfer holds the old connection until it is done with it (it restores or closes it
    /// last): `end()` waits for the whole move, not only its connect, or the move's last closes
    /// would run on loops the manager may have shut down by then.
    @Test("end during a transfer to a device whose TLS stalls: the move fails cancelled and is over when end returns")
    func endDuringTransfer() async throws {
        try await Self.withStalledDevice { rig, listener, manager, stalled in
            let session = try await manager.startSession(on: rig.device())
            let move = Task { try await session.transfer(to: stalled) }
            #expect(await listener.wait { $0.accepted == 1 }, "the transfer reached the listener")

            await session.end(stopCasting: false)
            #expect(await session.transferring == false, "end returned while the move was still running")
            #expect(await session.openAttempts.isEmpty)
            #expect(await session.state.isFinal)
            let result = await move.result
            #expect(throws: CastSessionError.cancelled) { try result.get() }
            #expect(await listener.wait { $0.closedByPeer == 1 }, "the stalled socket was closed")
        }
    }
}
