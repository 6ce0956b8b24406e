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
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let (manager, session) = try await Self.startSession(rig, recorder: recorder)
            #expect(recorder.names == ["willStart", "didStart"])
            #expect(await session.state == .connected)
            let app = try #require(await session.application)
            #expect(app.appID == "CC1AD845")
            let simulated = try await rig.state()
            #expect(simulated["app"]?["sessionId"]?.string == app.sessionID)
            let senders = simulated["senders"]?.array ?? []
            #expect(senders.contains { $0["endpoint"]?.string == app.transportID && $0["userAgent"]?.string == "castline" })
            #expect(await session.deviceStatus?.volumeLevel != nil)

            // A second manager joins the running app instead of relaunching it.
            let joiner = try await Self.startSession(rig).1
            #expect(await joiner.application?.sessionID == app.sessionID)
            await joiner.end(stopCasting: false)
            await manager.endAll(stopCasting: true)
            #expect(recorder.names.suffix(2) == ["willEnd", "didEnd"])
            #expect(try await rig.state()["app"] == .null)
        }
    }

    /// Takes its time over every status, then notes it: if a request completed before its
    /// reply's status reached the listeners, the caller would look before the note is there.
    /// The sleeps are the behaviour under test (a listener slow to return), not waits.
    final class SlowListener: CastSessionListener, RemoteMediaClientListener {
        let mutedSeen = Mutex(false)
        let volumeSeen = Mutex<Double?>(nil)
        func session(_ session: CastSession, didReceiveDeviceStatus status: CastDeviceStatus) {
            usleep(100_000)   // behaviour: a listener that takes 0.1 s over each status
            if status.isMuted == true { mutedSeen.withLock { $0 = true } }
        }
        func remoteMediaClient(_ client: RemoteMediaClient, didUpdate status: MediaStatus?) {
            usleep(100_000)   // behaviour: a listener that takes 0.1 s over each status
            volumeSeen.withLock { $0 = status?.volume?.level }
        }
    }

    @Test("a reply's status reaches the listeners and the media client before its request completes")
    func statusBeforeCompletion() async throws {
        try await withSenderRig { rig in
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
    }

    @Test("two concurrent starts on one device share one session; its streams end with it")
    func concurrentStart() async throws {
        try await withSenderRig { rig in
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
    }

    @Test("joinOnly fails with appNotRunning when the app does not run; a refused connection fails to start")
    func startFailures() async throws {
        try await withSenderRig { rig in
            let recorder = EventRecorder()
            let manager = rig.manager { $0.joinPolicy = .joinOnly }
            manager.addListener(recorder)
            await #expect(throws: CastSessionError.appNotRunning(appID: "CC1AD845")) { try await manager.startSession(on: rig.device()) }
            #expect(recorder.names == ["willStart", "didFailToStart"])

            var nowhere = rig.device()
            nowhere.port = 1
            do throws(CastSessionError) {
                _ = try await rig.manager().startSession(on: nowhere)
                Issue.record("started on a closed port")
            } catch {
                guard case .connectFailed(.connectFailed) = error else { Issue.record("wrong error \(error)"); return }
            }
        }
    }

    @Test("app stopped by another sender: didEnd with appStopped; replaced by another app: appReplaced")
    func appStoppedElsewhere() async throws {
        try await withSenderRig { rig in
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
    }

    @Test("device auth: required and verified with the simulator root; refused with a foreign root; the Cast roots ship")
    func deviceAuth() async throws {
        try await withSenderRig { rig in
            let (manager, session) = try await Self.startSession(rig) {
                $0.deviceAuth = .require
                $0.trustAnchors = [rig.simulator.authority.rootCertificate]
            }
            guard case .verified = await session.deviceAuth else { Issue.record("not verified: \(await session.deviceAuth)"); return }
            await manager.endAll(stopCasting: true)

            let foreign = TestAuthority.other.rootCertificate
            let refused = rig.manager { $0.deviceAuth = .require; $0.trustAnchors = [foreign] }
            do throws(CastSessionError) {
                _ = try await refused.startSession(on: rig.device())
                Issue.record("started with a foreign root")
            } catch {
                guard case .connectFailed(.deviceAuthFailed) = error else { Issue.record("wrong error \(error)"); return }
            }
            // Default anchors (the public Cast roots) do not trust the simulator either.
            await #expect(throws: CastSessionError.self) { try await Self.startSession(rig) { $0.deviceAuth = .require } }
        }
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
        try await withTeardown(simulator, { await $0.stop() }) { simulator in
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
                    _ = await session.remoteMediaClient.load(MediaInformation(contentID: "https://media.example/v.mp4", contentType: "video/mp4")).result
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
}
