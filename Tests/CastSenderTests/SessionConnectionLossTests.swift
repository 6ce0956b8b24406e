import Glibc
import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
@testable import CastSender
import CastTransport
import Synchronization
import SystemCrypto
import Testing

/// The connection lost under a session: dropped by the device, a stalled heartbeat, the device
/// unreachable for a while or rebooted.
extension SessionIntegrationTests {
    @Test("connection dropped mid-playback: didSuspend, didResume, the same app session, status keeps coming; pending requests fail typed")
    func dropAndResume() async throws {
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await Self.startSession(rig, recorder: recorder)
            _ = try await Self.load(session)
            #expect(await waitForMediaStatus(session.remoteMediaClient) { $0.playerState == .playing } != nil)
            let sessionID = await session.application?.sessionID

            try await rig.control(["command": "delay", "device": 0, "seconds": 2])
            let pending = await session.remoteMediaClient.requestStatus()
            try await rig.control(["command": "drop", "device": 0])
            guard case .failure(.disconnected) = await pending.result else {
                Issue.record("pending request did not fail as disconnected: \(await pending.result)")
                return
            }
            try await rig.control(["command": "delay", "device": 0, "seconds": 0])
            #expect(await recorder.wait { $0.map(\.name).contains("didResume") })
            #expect(recorder.names == ["willStart", "didStart", "didSuspend", "willResume", "didResume"])
            #expect(await session.state == .connected)
            #expect(await session.application?.sessionID == sessionID)
            // The retry that reconnected lets go of its handle once it has run: a finished task
            // keeps its whole reconnect's task-allocator slabs while its handle is held.
            #expect(await pollUntil(timeout: 5) { await session.retryTask == nil })

            // The media client still works and listeners still hear status.
            let before = recorder.mediaStatuses.count
            let paused = try await session.remoteMediaClient.pause().value()
            #expect(paused?.playerState == .paused)
            #expect(recorder.mediaStatuses.count > before)
            let suspendLog = rig.logRecords.first { $0.className == "CastSession" && $0.message.hasPrefix("didSuspend") }
            #expect(suspendLog?.level == .warning)
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("heartbeat stalled: suspended with a heartbeat timeout no sooner than the configured timeout")
    func heartbeatStall() async throws {
        try await withSenderRig(settings: { $0.pingInterval = 60; $0.heartbeatTimeout = 120 }) { rig in
            let recorder = EventRecorder()
            let (manager, _) = try await Self.startSession(rig, recorder: recorder) {
                $0.heartbeatInterval = 0.2
                $0.heartbeatTimeout = 0.8
                $0.reconnectPolicy = .never
            }
            try await rig.control(["command": "ignore-pings", "device": 0, "enabled": true])
            #expect(await recorder.wait { $0.map(\.name).contains("didEnd") })
            let ended = recorder.events.last
            guard case .didEnd(.connectionLost(.heartbeatTimeout(let silent))?)? = ended else {
                Issue.record("not ended by a heartbeat timeout: \(recorder.events)")
                return
            }
            #expect(silent >= 0.8)
            await manager.endAll(stopCasting: false)
        }
    }

    @Test("heartbeat stalled with reconnects on: didSuspend says heartbeat timeout, then resumes when the device answers again")
    func heartbeatStallResumes() async throws {
        try await withSenderRig(settings: { $0.pingInterval = 60; $0.heartbeatTimeout = 120 }) { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await Self.startSession(rig, recorder: recorder) {
                $0.heartbeatInterval = 0.2
                $0.heartbeatTimeout = 0.8
            }
            try await rig.control(["command": "ignore-pings", "device": 0, "enabled": true])
            #expect(await recorder.wait { $0.contains { if case .didSuspend(let reason) = $0 { return reason.isHeartbeatTimeout }; return false } })
            try await rig.control(["command": "ignore-pings", "device": 0, "enabled": false])
            #expect(await recorder.wait { $0.contains(.didResume(transferred: false)) })
            // Waited for, not read once: with a 0.8 s timeout a loaded machine may suspend it again.
            #expect(await session.waitForState(timeout: 10) { $0 == .connected } == .connected)
            await manager.endAll(stopCasting: true)
        }
    }
}

@Suite("CastSession when the device is unreachable", .timeLimit(.minutes(1)))
struct SessionOutageTests {
    @Test("network outage (app kept): suspended while unreachable, resumed the same app session once reachable")
    func outage() async throws {
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await SessionIntegrationTests.startSession(rig, recorder: recorder)
            let sessionID = await session.application?.sessionID
            try await rig.control(["command": "outage", "device": 0, "downFor": 1])
            #expect(await recorder.wait { $0.contains(.didResume(transferred: false)) })
            #expect(recorder.names == ["willStart", "didStart", "didSuspend", "willResume", "didResume"])
            #expect(await session.application?.sessionID == sessionID)
            let attempts = rig.logRecords.filter { $0.className == "CastSession" && $0.message.hasPrefix("reconnect attempt") }
            #expect(!attempts.isEmpty && attempts.allSatisfy { $0.fields["attempt"] != nil && $0.fields["delayMs"] != nil })
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("reboot (app gone): the resume finds no app session and ends with sessionGone")
    func reboot() async throws {
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let (_, session) = try await SessionIntegrationTests.startSession(rig, recorder: recorder)
            let app = try #require(await session.application)
            try await rig.control(["command": "reboot", "device": 0, "downFor": 0.5])
            // A bound for a loaded machine (the whole suite runs in parallel on two cores): the
            // claim is the outcome, sessionGone, not how fast it comes.
            #expect(await recorder.wait(timeout: 30) { $0.map(\.name).contains("didEnd") })
            #expect(recorder.events.last == .didEnd(.sessionGone(appID: app.appID, sessionID: app.sessionID)))
        }
    }
}
