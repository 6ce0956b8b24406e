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

/// Sessions moving: resumed after a process restart from the resume file, transferred to another
/// device by the sender, or moved by the simulator (a transfer started elsewhere).
@Suite("CastSession resume and transfer", .timeLimit(.minutes(1)))
struct SessionResumeTransferTests {
    @Test("process restart: a new SessionManager resumes the saved session (same app session, media status back)")
    func resumeAfterRestart() async throws {
        try await withSenderRig { rig in
            let path = "/tmp/castline-resume-\(UInt32.random(in: 0...UInt32.max)).json"
            defer { unlinkIfPresent(path) }
            let first = rig.manager { $0.sessionResumeFile = path }
            let session = try await first.startSession(on: rig.device())
            _ = try await SessionIntegrationTests.load(session)
            let sessionID = try #require(await session.application?.sessionID)
            #expect(try SessionResumeStore(path: path).saved.map(\.sessionID) == [sessionID])
            await first.shutdown()   // leaves the app running and the record in place

            let recorder = EventRecorder()
            let second = rig.manager { $0.sessionResumeFile = path }
            second.addListener(recorder)
            #expect(await second.savedSessions.count == 1)
            let resumed = await second.resumeSavedSessions()
            let again = try #require(resumed.first)
            #expect(await again.state == .connected)
            #expect(await again.application?.sessionID == sessionID)
            #expect(recorder.names == ["willResume", "didResume"])
            #expect(again.remoteMediaClient.mediaStatus?.media?.contentID == SessionIntegrationTests.movie)
            await second.endAll(stopCasting: true)
            #expect(try SessionResumeStore(path: path).saved.isEmpty)

            // Nothing to resume when the app session is gone: ended with sessionGone, record dropped.
            let third = rig.manager { $0.sessionResumeFile = path }
            let fresh = try await third.startSession(on: rig.device())
            await third.shutdown()
            try await rig.control(["command": "stop-app", "device": 0])
            let fourth = rig.manager { $0.sessionResumeFile = path }
            let stale = try #require(await fourth.resumeSavedSessions().first)
            guard case .ended(.sessionGone?) = await stale.state else { Issue.record("not sessionGone: \(await stale.state)"); return }
            #expect(try SessionResumeStore(path: path).saved.isEmpty)
            _ = fresh
        }
    }

    @Test("transfer: the media moves to the other device at its position, didResume(transferred) with the new device")
    func transfer() async throws {
        try await withSenderRig(count: 2) { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await SessionIntegrationTests.startSession(rig, recorder: recorder)
            _ = try await SessionIntegrationTests.load(session, options: MediaLoadOptions(startTime: 100))
            #expect(await waitForMediaStatus(session.remoteMediaClient) { $0.playerState == .playing } != nil)
            try await session.transfer(to: rig.device(1))
            #expect(recorder.events.last == .didResume(transferred: true))
            #expect(await session.device.id == rig.device(1).id)
            let target = try await rig.state(1)
            #expect(target["media"]?["contentId"]?.string == SessionIntegrationTests.movie)
            #expect((target["media"]?["currentTime"]?.double ?? 0) >= 100)
            #expect(try await rig.state(0)["app"] == .null)
            #expect(await waitForMediaStatus(session.remoteMediaClient) { $0.playerState == .playing } != nil)
            let paused = try await session.remoteMediaClient.pause().value()
            #expect(paused?.playerState == .paused)
            #expect(try await rig.state(1)["media"]?["playerState"]?.string == "PAUSED")
            await manager.endAll(stopCasting: true)
        }
    }

    @Test("transfer with a resume file: the record follows the session (old device's record removed)")
    func transferMovesTheResumeRecord() async throws {
        try await withSenderRig(count: 2) { rig in
            let path = "/tmp/castline-resume-\(UInt32.random(in: 0...UInt32.max)).json"
            defer { unlinkIfPresent(path) }
            let (manager, session) = try await SessionIntegrationTests.startSession(rig) { $0.sessionResumeFile = path }
            _ = try await SessionIntegrationTests.load(session)
            #expect(try SessionResumeStore(path: path).saved.map(\.device.id) == [rig.device(0).id])
            try await session.transfer(to: rig.device(1))
            let sessionID = try #require(await session.application?.sessionID)
            let saved = try SessionResumeStore(path: path).saved
            #expect(saved.map(\.device.id) == [rig.device(1).id])
            #expect(saved.map(\.sessionID) == [sessionID])
            await manager.shutdown()
            // A restarted process resumes on the device the session moved to, and only there.
            let second = rig.manager { $0.sessionResumeFile = path }
            let resumed = await second.resumeSavedSessions()
            #expect(resumed.count == 1)
            #expect(await resumed.first?.device.id == rig.device(1).id)
            await second.endAll(stopCasting: true)
        }
    }
}

func unlinkIfPresent(_ path: String) {
    _ = path.withCString { unlink($0) }
}

@Suite("Stream transfer started elsewhere", .timeLimit(.minutes(1)))
struct ExternalTransferTests {
    @Test("the simulator moves the session (output switcher): didResume(transferred) on the device now playing it")
    func followsTransfer() async throws {
        try await withSenderRig(count: 3) { rig in
            let recorder = EventRecorder()
            let manager = rig.manager()
            let devices = [rig.device(0), rig.device(1), rig.device(2)]
            await manager.setTransferCandidates { devices }
            manager.addListener(recorder)
            let session = try await manager.startSession(on: rig.device(0))
            _ = try await SessionIntegrationTests.load(session)
            // Device 1 runs the same app with other media: not where our session went.
            let bystander = try await rig.manager().startSession(on: rig.device(1))
            _ = try await SessionIntegrationTests.load(bystander, "https://media.example/other.mp4")
            try await rig.control(["command": "transfer", "device": 0, "to": 2])
            #expect(await recorder.wait { $0.contains(.didResume(transferred: true)) })
            #expect(await session.device.id == rig.device(2).id)
            #expect(await session.state == .connected)
            #expect(session.remoteMediaClient.mediaStatus?.media?.contentID == SessionIntegrationTests.movie)
            #expect(await manager.session(on: rig.device(2).id) === session)
            #expect(session.currentDeviceID == rig.device(2).id)
            #expect(await manager.session(on: rig.device(0).id) == nil, "the session left device 0")
            let paused = try await session.remoteMediaClient.pause().value()
            #expect(paused?.playerState == .paused || paused?.playerState == .buffering)
            #expect(try await rig.state(2)["media"]?["contentId"]?.string == SessionIntegrationTests.movie)

            // Stopped with nowhere to go: didEnd(appStopped).
            try await rig.control(["command": "stop-app", "device": 2])
            #expect(await recorder.wait { $0.map(\.name).contains("didEnd") })
            #expect(recorder.events.last == .didEnd(.appStopped(appID: "CC1AD845")))
            // An ended session is not the device's session any more: a new start makes a new one.
            #expect(session.hasEnded)
            #expect(await manager.activeSessions.isEmpty)
            #expect(await manager.session(on: rig.device(2).id) == nil)
            await bystander.end(stopCasting: true)
        }
    }
}
