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

/// The sender framework against `castline sim` over real loopback TLS.
@Suite("CastSession against the simulator", .timeLimit(.minutes(1)))
struct SessionIntegrationTests {
    static let movie = "https://media.example/castline/big-buck-bunny.mp4"

    static func startSession(_ rig: SenderRig, appID: String = "CC1AD845", recorder: EventRecorder? = nil,
                             _ adjust: (inout CastOptions) -> Void = { _ in }) async throws -> (SessionManager, CastSession) {
        let manager = rig.manager(appID: appID, adjust)
        if let recorder { manager.addListener(recorder) }
        let session = try await manager.startSession(on: rig.device())
        if let recorder { session.remoteMediaClient.addListener(recorder) }
        return (manager, session)
    }

    static func load(_ session: CastSession, _ contentID: String = movie, options: MediaLoadOptions = MediaLoadOptions())
        async throws -> MediaStatus? {
        let media = try MediaInformationBuilder(contentURL: contentID).contentType("video/mp4")
            .movie(title: "Big Buck Bunny", studio: "Blender Foundation").image("https://media.example/poster.jpg", width: 480, height: 720)
            .duration(596).build()
        return try await session.remoteMediaClient.load(media, options: options).value()
    }

    @Test("start launches the app: willStart then didStart, CONNECT to its transportId, media status requested")
    func startLaunches() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (manager, session) = try await Self.startSession(rig, recorder: recorder)
        #expect(recorder.names == ["willStart", "didStart"])
        #expect(await session.state == .connected)
        let app = try #require(await session.application)
        #expect(app.appId == "CC1AD845")
        let simulated = try await rig.state()
        #expect(simulated["app"]?["sessionId"]?.string == app.sessionId)
        let senders = simulated["senders"]?.array ?? []
        #expect(senders.contains { $0["endpoint"]?.string == app.transportId && $0["userAgent"]?.string == "castline" })
        #expect(await session.deviceStatus?.volumeLevel != nil)

        // A second manager joins the running app instead of relaunching it.
        let joiner = try await Self.startSession(rig).1
        #expect(await joiner.application?.sessionId == app.sessionId)
        await joiner.end(stopCasting: false)
        await manager.endAll(stopCasting: true)
        #expect(recorder.names.suffix(2) == ["willEnd", "didEnd"])
        #expect(try await rig.state()["app"] == .null)
    }

    /// Takes its time over every status, then notes it: if a request completed before its
    /// reply's status reached the listeners, the caller would look before the note is there.
    final class SlowListener: CastSessionListener, RemoteMediaClientListener {
        let mutedSeen = Mutex(false)
        let volumeSeen = Mutex<Double?>(nil)
        func session(_ session: CastSession, didReceiveDeviceStatus status: CastDeviceStatus) {
            usleep(100_000)
            if status.isMuted == true { mutedSeen.withLock { $0 = true } }
        }
        func remoteMediaClient(_ client: RemoteMediaClient, didUpdate status: MediaStatus?) {
            usleep(100_000)
            volumeSeen.withLock { $0 = status?.volume?.level }
        }
    }

    @Test("a reply's status reaches the listeners and the media client before its request completes")
    func statusBeforeCompletion() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig)
        let slow = SlowListener()
        session.addListener(slow)
        session.remoteMediaClient.addListener(slow)
        _ = try await Self.load(session)
        _ = try await session.setDeviceMuted(true).value()
        #expect(slow.mutedSeen.withLock { $0 }, "didReceiveDeviceStatus ran before setDeviceMuted completed")
        #expect(await session.deviceStatus?.isMuted == true)
        _ = try await session.remoteMediaClient.setStreamVolume(0.3).value()
        #expect(abs((slow.volumeSeen.withLock { $0 } ?? 0) - 0.3) < 0.001, "didUpdate ran before setStreamVolume completed")
        #expect(abs((session.remoteMediaClient.mediaStatus?.volume?.level ?? 0) - 0.3) < 0.001)
        await manager.endAll(stopCasting: true)
    }

    @Test("two concurrent starts on one device share one session; its streams end with it")
    func concurrentStart() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let manager = rig.manager()
        async let first = manager.startSession(on: rig.device())
        async let second = manager.startSession(on: rig.device())
        let (a, b) = try await (first, second)
        #expect(a === b)
        #expect(await manager.activeSessions.count == 1)
        let updates = a.updates()
        await manager.endAll(stopCasting: true)
        var names: [String] = []
        for await update in updates { if case .event(let event, _) = update { names.append(event.name) } }
        #expect(names == ["willEnd", "didEnd"], "the stream ends after didEnd")
        #expect(await a.waitForState(timeout: 0.1) { _ in false }.isFinal)
    }

    @Test("joinOnly fails with appNotRunning when the app does not run; a refused connection fails to start")
    func startFailures() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let manager = rig.manager { $0.joinPolicy = .joinOnly }
        manager.addListener(recorder)
        await #expect(throws: CastSessionError.appNotRunning(appID: "CC1AD845")) { try await manager.startSession(on: rig.device()) }
        #expect(recorder.names == ["willStart", "didFailToStart"])

        var nowhere = rig.device()
        nowhere.port = 1
        do {
            _ = try await rig.manager().startSession(on: nowhere)
            Issue.record("started on a closed port")
        } catch {
            guard case .connectFailed(.connectFailed) = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test("load, pause, play, seek (absolute and relative), stream volume, device volume and mute")
    func playbackControl() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (manager, session) = try await Self.startSession(rig, recorder: recorder)
        let client = session.remoteMediaClient
        let loaded = try await Self.load(session)
        #expect(loaded?.media?.contentId == Self.movie)
        #expect(loaded?.media?.metadata?.title == "Big Buck Bunny")
        let playing = await waitForMediaStatus(client) { $0.playerState == .playing }
        #expect(playing != nil)
        #expect(playing?.supportedMediaCommands.contains(.pause) == true)

        let paused = try await client.pause().value()
        #expect(paused?.playerState == .paused)
        let seeked = try await client.seek(to: 120, resumeState: .playbackStart).value()
        #expect((seeked?.currentTime ?? 0) >= 120)
        #expect(await waitForMediaStatus(client) { $0.playerState == .playing } != nil)
        let relative = try await client.seek(by: -60).value()
        let position = try #require(relative?.currentTime)
        #expect(position >= 60 && position < 120, "relative seek landed at \(position)")

        let faster = try await client.setPlaybackRate(1.5).value()
        #expect(faster?.playbackRate == 1.5)
        let quieter = try await client.setStreamVolume(0.25).value()
        #expect(abs((quieter?.volume?.level ?? 0) - 0.25) < 0.001)
        // A reply's status is applied before its request completes.
        #expect(abs((client.mediaStatus?.volume?.level ?? 0) - 0.25) < 0.001)
        let muted = try await client.setStreamMuted(true).value()
        #expect(muted?.volume?.muted == true)

        let device = try await session.setDeviceVolume(0.4).value()
        #expect(abs((device.volumeLevel ?? 0) - 0.4) < 0.001)
        let deviceMuted = try await session.setDeviceMuted(true).value()
        #expect(deviceMuted.isMuted == true)
        #expect(recorder.deviceStatusList.contains { $0.isMuted == true })

        // Requests go out in call order: twenty seeks queued without waiting end at the last one.
        var seeks: [CastRequest<MediaStatus?>] = []
        for step in 1...20 { seeks.append(await client.seek(to: Double(step * 10))) }
        for seek in seeks { _ = try await seek.value() }
        let last = try #require(try await client.requestStatus().value())
        #expect(last.currentTime >= 200 && last.currentTime < 260, "ended at \(last.currentTime)")

        let stopped = try await client.stop().value()
        #expect(stopped == nil || stopped?.playerState == .idle)
        #expect(recorder.mediaStatuses.contains { $0?.playerState == .playing })
        await manager.endAll(stopCasting: true)
    }

    @Test("commands without a media session fail at once with INVALID_PLAYER_STATE; a LOAD failure names the code")
    func typedFailures() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig)
        let client = session.remoteMediaClient
        await #expect(throws: CastRequestError.invalidPlayerState) { try await client.pause().value() }

        let broken = MediaInformation(contentId: "https://media.example/broken.mp4", contentType: "video/mp4")
        let failed = await client.load(broken).result
        #expect(failed == .failure(.loadFailed(.mediaSrcNotSupported)))
        if case .failure(let error) = failed { #expect("\(error)".contains("MEDIA_SRC_NOT_SUPPORTED"), "\(error)") }
        try await rig.control(["command": "fail-next-load", "device": 0, "code": 103])
        await #expect(throws: CastRequestError.loadFailed(.mediaNetwork)) { try await Self.load(session) }

        // A second LOAD before the first answers supersedes it.
        try await rig.control(["command": "delay", "device": 0, "seconds": 0.5])
        let media = MediaInformation(contentId: Self.movie, contentType: "video/mp4")
        let first = await client.load(media)
        let second = await client.load(media)
        #expect(await first.result == .failure(.superseded(by: second.id)))
        #expect(try await second.value()?.media?.contentId == Self.movie)

        // A reply later than the timeout: timed out, typed.
        try await rig.control(["command": "delay", "device": 0, "seconds": 1.5])
        let slow = await client.load(media, options: MediaLoadOptions(timeout: 0.3))
        guard case .failure(.timedOut) = await slow.result else { Issue.record("not timed out: \(await slow.result)"); return }
        // Cancel: the awaiting side gets .cancelled at once.
        let cancelled = await client.requestStatus()
        cancelled.cancel()
        #expect(await cancelled.result == .failure(.cancelled))
        try await rig.control(["command": "delay", "device": 0, "seconds": 0])
        await manager.endAll(stopCasting: true)
    }

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

    @Test("queue: load, next, previous, insert, remove, reorder, repeat mode; tracks: active track ids")
    func queueAndTracks() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig)
        let client = session.remoteMediaClient
        let items = (1...3).map { QueueItem(media: MediaInformation(contentId: "https://media.example/track\($0).mp3", contentType: "audio/mpeg")) }
        let loaded = try #require(try await client.queueLoad(items, startIndex: 0, repeatMode: .off).value())
        let ids = try #require(loaded.items?.compactMap { (item: QueueItem) in item.itemId })
        #expect(ids.count == 3)
        let next = try await client.queueNext().value()
        #expect(next?.currentItemId == ids[1])
        let previous = try await client.queuePrevious().value()
        #expect(previous?.currentItemId == ids[0])
        let inserted = try await client.queueInsert([QueueItem(media: MediaInformation(contentId: "https://media.example/track4.mp3",
                                                                                        contentType: "audio/mpeg"))]).value()
        #expect(inserted?.items?.count == 4)
        let removed = try await client.queueRemove(itemIDs: [ids[2]]).value()
        #expect(removed?.items?.count == 3)
        let reordered = try await client.queueReorder(itemIDs: [ids[1]], beforeItemID: ids[0]).value()
        #expect(reordered?.items?.first?.itemId == ids[1])
        // Past the end of the queue: the device's INVALID_REQUEST with its reason, typed.
        let last = try #require(reordered?.items?.last?.itemId)
        _ = try await client.queueJump(toItemID: last).value()
        #expect(await client.queueNext().result == .failure(.invalidRequest(.endOfQueue)))
        let repeating = try await client.queueSetRepeatMode(.all).value()
        #expect(repeating?.repeatMode == .all)

        let tracks = [MediaTrack(trackId: 1, type: .text, trackContentId: "https://media.example/en.vtt", trackContentType: "text/vtt",
                                 subtype: .subtitles, language: "en", name: "English"),
                      MediaTrack(trackId: 2, type: .text, trackContentId: "https://media.example/fr.vtt", trackContentType: "text/vtt",
                                 subtype: .subtitles, language: "fr", name: "Français")]
        let media = try MediaInformationBuilder(contentURL: Self.movie).contentType("video/mp4").tracks(tracks).build()
        let withTracks = try await client.load(media, options: MediaLoadOptions(activeTrackIDs: [1])).value()
        #expect(withTracks?.activeTrackIds == [1])
        #expect(withTracks?.media?.tracks.count == 2)
        let switched = try await client.setActiveTrackIDs([2]).value()
        #expect(switched?.activeTrackIds == [2])
        await manager.endAll(stopCasting: true)
    }

    @Test("4K HDR media reports VideoInfo 3840×2160 hdr (is4K, isHDR)")
    func videoInfo() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig)
        let status = try await Self.load(session, "https://media.example/uhd-hdr/sintel.mp4")
        let video = try #require(status?.videoInfo)
        #expect(video.width == 3840 && video.height == 2160 && video.hdrType == .hdr)
        #expect(video.is4K && video.isHDR && video.badge == "4K HDR")
        let plain = try await Self.load(session)
        #expect(plain?.videoInfo == nil)
        await manager.endAll(stopCasting: true)
    }

    @Test("custom channel: text, binary and request/reply round trips on its own namespace only")
    func customChannel() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig, appID: SenderRig.echoAppID)
        let channel = GenericChannel(namespace: SenderRig.echoNamespace)
        let other = GenericChannel(namespace: "urn:x-cast:com.castline.test.other")
        await session.add(channel)
        await session.add(other)
        let otherMessages = other.messages()
        let messages = channel.messages()
        var iterator = messages.makeAsyncIterator()

        try await channel.send(text: #"{"hello":"world"}"#)
        let echoed = await iterator.next()
        #expect(echoed?.payload == .string(#"{"hello":"world"}"#))
        #expect(echoed?.source == (await session.application?.transportId))
        try await channel.send(binary: [0, 1, 2, 254, 255])
        #expect(await iterator.next()?.payload == .binary([0, 1, 2, 254, 255]))

        let reply = try await channel.request(["type": "PING", "value": 7]).value()
        #expect(reply["type"]?.string == "PING" && reply["value"]?.int == 7 && reply["requestId"]?.int != nil)

        // Nothing reached the other namespace.
        #expect(await otherMessages.first(within: 0.2) == nil)
        await manager.endAll(stopCasting: true)
    }

    @Test("connection dropped mid-playback: didSuspend, didResume, the same app session, status keeps coming; pending requests fail typed")
    func dropAndResume() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (manager, session) = try await Self.startSession(rig, recorder: recorder)
        _ = try await Self.load(session)
        #expect(await waitForMediaStatus(session.remoteMediaClient) { $0.playerState == .playing } != nil)
        let sessionID = await session.application?.sessionId

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
        #expect(await session.application?.sessionId == sessionID)

        // The media client still works and listeners still hear status.
        let before = recorder.mediaStatuses.count
        let paused = try await session.remoteMediaClient.pause().value()
        #expect(paused?.playerState == .paused)
        #expect(recorder.mediaStatuses.count > before)
        let suspendLog = rig.logRecords.first { $0.className == "CastSession" && $0.message.hasPrefix("didSuspend") }
        #expect(suspendLog?.level == .warning)
        await manager.endAll(stopCasting: true)
    }

    @Test("heartbeat stalled: suspended with a heartbeat timeout no sooner than the configured timeout")
    func heartbeatStall() async throws {
        let rig = try await SenderRig.start { $0.pingInterval = 60; $0.heartbeatTimeout = 120 }
        defer { Task { await rig.stop() } }
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

    @Test("heartbeat stalled with reconnects on: didSuspend says heartbeat timeout, then resumes when the device answers again")
    func heartbeatStallResumes() async throws {
        let rig = try await SenderRig.start { $0.pingInterval = 60; $0.heartbeatTimeout = 120 }
        defer { Task { await rig.stop() } }
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

    @Test("app stopped by another sender: didEnd with appStopped; replaced by another app: appReplaced")
    func appStoppedElsewhere() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (_, session) = try await Self.startSession(rig, recorder: recorder)
        try await rig.control(["command": "stop-app", "device": 0])
        #expect(await recorder.wait { $0.map(\.name).contains("didEnd") })
        #expect(recorder.events.last == .didEnd(.appStopped(appID: "CC1AD845")))
        #expect(await session.state == .ended(.appStopped(appID: "CC1AD845")))
        let log = rig.logRecords.first { $0.className == "CastSession" && $0.fields["endReason"] == .string("appStopped") }
        #expect(log != nil)

        let second = EventRecorder()
        let (_, replaced) = try await Self.startSession(rig, recorder: second)
        let other = try await Self.startSession(rig, appID: SenderRig.echoAppID).1
        #expect(await second.wait { $0.map(\.name).contains("didEnd") })
        #expect(await replaced.state == .ended(.appReplaced(appID: "CC1AD845", by: SenderRig.echoAppID)))
        await other.end(stopCasting: true)
    }

    @Test("device auth: required and verified with the simulator root; refused with a foreign root; the Cast roots ship")
    func deviceAuth() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let (manager, session) = try await Self.startSession(rig) {
            $0.deviceAuth = .require
            $0.trustAnchors = [rig.simulator.authority.rootCertificate]
        }
        guard case .verified = await session.deviceAuth else { Issue.record("not verified: \(await session.deviceAuth)"); return }
        await manager.endAll(stopCasting: true)

        let foreign = TestAuthority.other.rootCertificate
        let refused = rig.manager { $0.deviceAuth = .require; $0.trustAnchors = [foreign] }
        do {
            _ = try await refused.startSession(on: rig.device())
            Issue.record("started with a foreign root")
        } catch {
            guard case .connectFailed(.deviceAuthFailed) = error else { Issue.record("wrong error \(error)"); return }
        }
        // Default anchors (the public Cast roots) do not trust the simulator either.
        await #expect(throws: CastSessionError.self) { try await Self.startSession(rig) { $0.deviceAuth = .require } }
    }
}

@Suite("CastSession resume and transfer", .timeLimit(.minutes(1)))
struct SessionResumeTransferTests {
    @Test("process restart: a new SessionManager resumes the saved session (same app session, media status back)")
    func resumeAfterRestart() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let path = "/tmp/castline-resume-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlinkIfPresent(path) }
        let first = rig.manager { $0.sessionResumeFile = path }
        let session = try await first.startSession(on: rig.device())
        _ = try await SessionIntegrationTests.load(session)
        let sessionID = try #require(await session.application?.sessionId)
        #expect(try SessionResumeStore(path: path).saved.map(\.sessionID) == [sessionID])
        await first.shutdown()   // leaves the app running and the record in place

        let recorder = EventRecorder()
        let second = rig.manager { $0.sessionResumeFile = path }
        second.addListener(recorder)
        #expect(await second.savedSessions.count == 1)
        let resumed = await second.resumeSavedSessions()
        let again = try #require(resumed.first)
        #expect(await again.state == .connected)
        #expect(await again.application?.sessionId == sessionID)
        #expect(recorder.names == ["willResume", "didResume"])
        #expect(again.remoteMediaClient.mediaStatus?.media?.contentId == SessionIntegrationTests.movie)
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

    @Test("transfer: the media moves to the other device at its position, didResume(transferred) with the new device")
    func transfer() async throws {
        let rig = try await SenderRig.start(count: 2)
        defer { Task { await rig.stop() } }
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

    @Test("transfer with a resume file: the record follows the session (old device's record removed)")
    func transferMovesTheResumeRecord() async throws {
        let rig = try await SenderRig.start(count: 2)
        defer { Task { await rig.stop() } }
        let path = "/tmp/castline-resume-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlinkIfPresent(path) }
        let (manager, session) = try await SessionIntegrationTests.startSession(rig) { $0.sessionResumeFile = path }
        _ = try await SessionIntegrationTests.load(session)
        #expect(try SessionResumeStore(path: path).saved.map(\.device.id) == [rig.device(0).id])
        try await session.transfer(to: rig.device(1))
        let sessionID = try #require(await session.application?.sessionId)
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

func unlinkIfPresent(_ path: String) {
    _ = path.withCString { unlink($0) }
}

@Suite("CastSession when the device is unreachable", .timeLimit(.minutes(1)))
struct SessionOutageTests {
    @Test("network outage (app kept): suspended while unreachable, resumed the same app session once reachable")
    func outage() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (manager, session) = try await SessionIntegrationTests.startSession(rig, recorder: recorder)
        let sessionID = await session.application?.sessionId
        try await rig.control(["command": "outage", "device": 0, "downFor": 1])
        #expect(await recorder.wait { $0.contains(.didResume(transferred: false)) })
        #expect(recorder.names == ["willStart", "didStart", "didSuspend", "willResume", "didResume"])
        #expect(await session.application?.sessionId == sessionID)
        let attempts = rig.logRecords.filter { $0.className == "CastSession" && $0.message.hasPrefix("reconnect attempt") }
        #expect(!attempts.isEmpty && attempts.allSatisfy { $0.fields["attempt"] != nil && $0.fields["delayMs"] != nil })
        await manager.endAll(stopCasting: true)
    }

    @Test("reboot (app gone): the resume finds no app session and ends with sessionGone")
    func reboot() async throws {
        let rig = try await SenderRig.start()
        defer { Task { await rig.stop() } }
        let recorder = EventRecorder()
        let (_, session) = try await SessionIntegrationTests.startSession(rig, recorder: recorder)
        let app = try #require(await session.application)
        try await rig.control(["command": "reboot", "device": 0, "downFor": 0.5])
        #expect(await recorder.wait { $0.map(\.name).contains("didEnd") })
        #expect(recorder.events.last == .didEnd(.sessionGone(appID: app.appId, sessionID: app.sessionId)))
    }
}

@Suite("Audio-only devices", .timeLimit(.minutes(1)))
struct AudioOnlyTests {
    @Test("a speaker's device certificate carries the audio-only policy: surfaced on the session, a video LOAD is logged")
    func audioOnly() async throws {
        var settings = SimulatorSettings()
        settings.advertise = false
        settings.threads = 1
        settings.authority = SenderRig.authority
        let simulator = try await ReceiverSimulator.startOnFreePorts(count: 2, settings: settings, logSystem: LogSystem()) {
            $0.isVideoDevice = $0.castPort % 2 == 0 ? false : $0.isVideoDevice
        }
        defer { Task { await simulator.stop() } }
        let (logSystem, logs) = try MemoryLogSink.makeSystem("", minimum: .debug)
        var options = CastOptions()
        options.logSystem = logSystem
        options.deviceAuth = .require
        options.trustAnchors = [simulator.authority.rootCertificate]
        let manager = SessionManager(options: options)
        do {
            for configuration in simulator.devices.map(\.configuration) {
                let device = CastDevice(id: configuration.uuid, friendlyName: configuration.name, host: configuration.address,
                                        port: configuration.castPort)
                let session = try await manager.startSession(on: device)
                #expect(await session.isAudioOnly == !configuration.isVideoDevice, "\(configuration.name)")
                _ = await session.remoteMediaClient.load(MediaInformation(contentId: "https://media.example/v.mp4", contentType: "video/mp4")).result
            }
        } catch {
            await manager.shutdown()   // a session left running would reconnect to the stopped simulator for good
            throw error
        }
        #expect(simulator.devices.contains { !$0.configuration.isVideoDevice }, "one device is a speaker")
        _ = logSystem.flush()
        let warnings = logs.records.filter { $0.className == "RemoteMediaClient" && $0.message.contains("audio-only device") }
        #expect(warnings.count == 1)
        await manager.shutdown(stopCasting: true)
    }
}

@Suite("Stream transfer started elsewhere", .timeLimit(.minutes(1)))
struct ExternalTransferTests {
    @Test("the simulator moves the session (output switcher): didResume(transferred) on the device now playing it")
    func followsTransfer() async throws {
        let rig = try await SenderRig.start(count: 3)
        defer { Task { await rig.stop() } }
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
        #expect(session.remoteMediaClient.mediaStatus?.media?.contentId == SessionIntegrationTests.movie)
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
