import CastCore
import CastProtocol
import CastReceiverSim
import CastSender
import CastTestSupport
import Testing

/// Sessions with `JoinPolicy.follow` against the simulator: on the device rather than on one app.
@Suite("Following sessions", .timeLimit(.minutes(2)))
struct FollowingSessionTests {
    static let movie = "https://media.example/movie.mp4"

    @Test("an idle device: connected with no app; device volume and mute work without one")
    func idleDevice() async throws {
        try await withSenderRig { rig in
            let follower = try await rig.manager { $0.joinPolicy = .follow }.startSession(on: rig.device())
            #expect(await follower.state == .connected)
            #expect(await follower.application == nil)
            #expect(follower.remoteMediaClient.mediaStatus == nil)
            let volume = try await follower.setDeviceVolume(0.3).value()
            #expect(abs((volume.volumeLevel ?? 0) - 0.3) < 0.001)
            #expect(try await follower.setDeviceMuted(true).value().isMuted == true)
            let device = try await rig.state()
            #expect(abs((device["volume"]?["level"]?.double ?? 0) - 0.3) < 0.001, "the simulator's own state: \(device)")
            await follower.end(stopCasting: false)
        }
    }

    @Test("follows another sender's app and media, lets it go when it stops, and stays connected")
    func followsOtherSenders() async throws {
        try await withSenderRig { rig in
            let follower = try await rig.manager { $0.joinPolicy = .follow }.startSession(on: rig.device())
            let other = try await rig.manager().startSession(on: rig.device())
            let media = MediaInformation(contentID: Self.movie, contentType: "video/mp4")
            _ = try await other.remoteMediaClient.load(media).value()
            let seen = await waitForMediaStatus(follower.remoteMediaClient) { $0.media?.contentID == Self.movie && $0.playerState == .playing }
            #expect(seen != nil, "the follower saw the other sender's media playing")
            #expect(await follower.application?.appID == "CC1AD845")

            await other.end(stopCasting: true)
            #expect(await pollUntil(timeout: 10) { await follower.application == nil }, "the stopped app was let go")
            #expect(follower.remoteMediaClient.mediaStatus == nil)
            #expect(await follower.state == .connected)
            await follower.end(stopCasting: false)
        }
    }

    @Test("a load whose session ends before it plays fails as sessionEnded at once, not as a timeout")
    func sessionEndsDuringALoad() async throws {
        try await withSenderRig(settings: { $0.timing = PlaybackTiming(bufferingDelay: 8) }) { rig in
            let session = try await rig.manager().startSession(on: rig.device())
            let media = MediaInformation(contentID: Self.movie, contentType: "video/mp4")
            let waiting = Task { await session.remoteMediaClient.loadAndWait(media, timeout: 20) }
            #expect(await waitForMediaStatus(session.remoteMediaClient) { $0.playerState == .buffering } != nil, "the load is answered, buffering")
            let clock = ContinuousClock(), ended = clock.now
            await session.end(stopCasting: false)
            let result = await waiting.value
            #expect(clock.now - ended < .seconds(5), "it returned when the session ended, not at its 20 s timeout")
            guard case .failure(.sessionEnded) = result else {
                Issue.record("expected sessionEnded, got \(result)")
                return
            }
            #expect("\(LoadWaitError.sessionEnded(lastState: .buffering))".contains("the session ended before the media played"))
        }
    }

    @Test("launch and stop the app through the following session; it re-joins the app after a drop")
    func launchStopAndDrop() async throws {
        try await withSenderRig { rig in
            let follower = try await rig.manager { $0.joinPolicy = .follow }.startSession(on: rig.device())
            let app = try await follower.launch(appID: "CC1AD845")
            #expect(app.appID == "CC1AD845")
            let media = MediaInformation(contentID: Self.movie, contentType: "video/mp4")
            let loaded = try await follower.remoteMediaClient.loadAndWait(media).get()
            #expect(loaded.media?.contentID == Self.movie)

            let recorder = EventRecorder()
            follower.addListener(recorder)
            try await rig.control(["command": "drop", "device": 0])
            #expect(await recorder.wait { $0.contains(.didResume(transferred: false)) }, "resumed: \(recorder.names)")
            #expect(await follower.application?.sessionID == app.sessionID, "re-joined the same app session")
            #expect(await waitForMediaStatus(follower.remoteMediaClient) { $0.media?.contentID == Self.movie } != nil)

            try await follower.stopApplication()
            #expect(await pollUntil(timeout: 10) { await follower.application == nil })
            #expect(await follower.state == .connected)
            #expect(try await rig.state()["app"] == .null, "the simulator runs no app")
            await follower.end(stopCasting: false)
        }
    }

    @Test("a LOAD the app never answers fails as soon as the app stops, not at the request timeout")
    func pendingLoadFailsWhenTheAppStops() async throws {
        try await withSenderRig(settings: { $0.mediaFetchTimeout = 60; $0.timing.checksLoopbackMedia = true }) { rig in
            // The simulator fetches loopback media before it answers a LOAD: from a listener
            // that never answers, the LOAD stays pending.
            let silent = try await SilentListener.start(group: rig.group)
            rig.atStop { await silent.stop() }
            let follower = try await rig.manager { $0.joinPolicy = .follow; $0.requestTimeout = 30 }.startSession(on: rig.device())
            _ = try await follower.launch(appID: "CC1AD845")
            let media = MediaInformation(contentID: "http://127.0.0.1:\(silent.port)/never.mp4", contentType: "video/mp4")
            let load = Task { await follower.remoteMediaClient.load(media).result }
            #expect(await pollUntil(timeout: 10) { await silent.accepted > 0 }, "the simulator is fetching the media")
            let started = MonotonicClock.seconds()
            _ = try await rig.control(["command": "stop-app", "device": 0])
            let result = await load.value
            let waited = MonotonicClock.seconds() - started
            guard case .failure(.disconnected(let why)) = result else {
                Issue.record("the LOAD ended with \(result), not as disconnected by the app's stop")
                return
            }
            #expect(why.contains("CC1AD845") && why.contains("stopped"), "\(why)")
            #expect(waited < 5, "it failed \(waited) s after the stop; the request timeout is 30 s")
            #expect(await follower.state == .connected, "the session stays on the device")
            await follower.end(stopCasting: false)
        }
    }
}
