import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

@Suite("Receiver simulator: app namespaces and control")
struct AppAndControlTests {
    static let echoNS: CastNamespace = "urn:x-cast:com.example.echo"
    static let scriptNS: CastNamespace = "urn:x-cast:com.example.script"
    static let quietNS: CastNamespace = "urn:x-cast:com.example.quiet"

    static let customApp = AppDefinition(
        appID: "C0FFEE00", displayName: "Custom", namespaces: [echoNS, .media],
        customNamespaces: [
            CustomNamespaceBehaviour(namespace: scriptNS, mode: .scripted(["HELLO": ["type": "WELCOME", "version": 2]])),
            CustomNamespaceBehaviour(namespace: quietNS, mode: .silent),
        ]
    )

    static func launchCustom(_ sim: inout SimHarness) -> String {
        sim.connect()
        sim.receiver("LAUNCH", ["appId": "C0FFEE00"])
        let transport = sim.transportID!
        sim.connect(to: transport)
        return transport
    }

    @Test func customNamespacesAreAnnounced() throws {
        var sim = SimHarness(catalogue: [Self.customApp])
        sim.connect()
        let status = try #require(SimHarness.receiverStatuses(sim.receiver("LAUNCH", ["appId": "C0FFEE00"])).first)
        #expect(status.status.applications.first?.namespaces == [Self.echoNS, .media, Self.scriptNS, Self.quietNS])
    }

    @Test func echoScriptedAndSilent() throws {
        var sim = SimHarness(catalogue: [Self.customApp])
        let transport = Self.launchCustom(&sim)
        let echoed = sim.raw("{\"anything\": [1, 2, 3]}", on: Self.echoNS, to: transport)
        #expect(echoed.count == 1)
        let message = try #require(echoed.first?.message)
        #expect(message.payload == .string("{\"anything\": [1, 2, 3]}"))
        #expect(message.sourceID == transport && message.destinationID == "sender-0" && message.namespace == Self.echoNS)
        let binary = CastMessage(sourceID: "sender-0", destinationID: transport, namespace: Self.echoNS, payload: .binary([0, 255]))
        #expect(sim.device.receive(binary, from: SenderConnectionID(1), now: sim.now).first?.message?.payload == .binary([0, 255]))

        let hello = SimHarness.sent(sim.send(["type": "HELLO", "requestId": 17], on: Self.scriptNS, to: transport))
        #expect(hello.map(\.json) == [["type": "WELCOME", "version": 2, "requestId": 17]])
        let plain = SimHarness.sent(sim.send(["type": "HELLO"], on: Self.scriptNS, to: transport))
        #expect(plain.map(\.json) == [["type": "WELCOME", "version": 2]])
        let unknown = SimHarness.sent(sim.send(["type": "BYE", "requestId": 3], on: Self.scriptNS, to: transport))
        #expect(unknown.map(\.json) == [["type": "ERROR", "reason": "NOT_SUPPORTED", "requestId": 3]])
        let garbage = SimHarness.sent(sim.raw("not json", on: Self.scriptNS, to: transport))
        #expect(garbage.map(\.json) == [["type": "ERROR", "reason": "NOT_SUPPORTED"]])

        #expect(sim.send(["type": "HELLO"], on: Self.quietNS, to: transport).isEmpty)
        #expect(sim.snapshot.ignoredMessages == 0)
        // Media still works in the same app.
        #expect(SimHarness.mediaStatuses(sim.load()).last?.status.first?.supportedMediaCommands == .allBasicMedia)
    }

    @Test func appMessagesNeedAVirtualConnectionToTheApp() {
        var sim = SimHarness(catalogue: [Self.customApp])
        sim.connect()
        sim.receiver("LAUNCH", ["appId": "C0FFEE00"])
        let transport = sim.transportID!
        #expect(sim.send(["type": "HELLO"], on: Self.echoNS, to: transport).isEmpty)
        #expect(sim.media("GET_STATUS").isEmpty)
        #expect(sim.snapshot.ignoredMessages == 2)
    }

    @Test func pushGoesToTheAppOrThePlatform() throws {
        var sim = SimHarness(catalogue: [Self.customApp])
        #expect(sim.device.push(namespace: Self.echoNS, payload: ["type": "X"], now: sim.now).isEmpty)
        let transport = Self.launchCustom(&sim)
        sim.connect(2, sender: "sender-b")
        let app = SimHarness.sent(sim.device.push(namespace: Self.echoNS, payload: ["type": "NEWS"], now: sim.now))
        #expect(app.count == 1 && app.first?.connection == 1 && app.first?.message.sourceID == transport)
        #expect(app.first?.json == ["type": "NEWS"])
        let platform = SimHarness.sent(sim.device.push(namespace: .receiver, payload: ["type": "RECEIVER_STATUS", "requestId": 0], now: sim.now))
        #expect(platform.map(\.connection) == [1, 2] && platform.allSatisfy { $0.message.sourceID == "receiver-0" })
        #expect(platform.map(\.message.destinationID) == ["sender-0", "sender-b"])
    }

    @Test func rebootClosesEverythingButKeepsTheVolume() throws {
        var sim = SimHarness()
        sim.launchDMR(connection: 1)
        sim.connect(2, sender: "sender-b")
        sim.receiver("SET_VOLUME", ["volume": ["level": 0.25]])
        sim.load()
        let outputs = sim.device.reboot(now: sim.now)
        #expect(outputs == [
            .closeConnection(SenderConnectionID(1), reason: "reboot"), .closeConnection(SenderConnectionID(2), reason: "reboot"),
            .advertisementChanged(.idle),
        ])
        let snapshot = sim.snapshot
        #expect(snapshot.app == nil && snapshot.media == nil && snapshot.senders.isEmpty && snapshot.connections.isEmpty)
        #expect(snapshot.volume.level == 0.25)
        #expect(sim.device.nextDeadline == nil)
        sim.connect()
        let status = try #require(SimHarness.receiverStatuses(sim.receiver("GET_STATUS")).first)
        #expect(status.status.applications.isEmpty && status.status.volume?.level == 0.25)
    }

    @Test func stopRunningAppFromControl() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR()
        sim.connect(2, sender: "sender-b")
        let outputs = sim.device.stopRunningApp(now: sim.now)
        let sent = SimHarness.sent(outputs)
        #expect(sent.filter { $0.message.namespace == .connection }.map(\.message.sourceID) == [transport])
        let statuses = SimHarness.receiverStatuses(outputs)
        #expect(statuses.count == 2 && statuses.allSatisfy { $0.requestID == 0 && $0.status.applications.isEmpty })
        #expect(SimHarness.advertisements(outputs) == [.idle])
        #expect(sim.device.stopRunningApp(now: sim.now).isEmpty)
    }

    @Test func exportAndImportKeepMediaAndPosition() throws {
        var source = SimHarness(seed: 1)
        source.launchDMR()
        source.load(title: "Travelling")
        source.advance(by: 0.25)
        source.advance(by: 17)
        let session = try #require(source.device.exportSession(now: source.now))
        #expect(session.app.appID == "CC1AD845")
        let media = try #require(session.media)
        #expect(media.currentTime == 17 && media.playerState == .playing && media.media.metadata?.title == "Travelling")
        #expect(session.json["media"]?["currentTime"] == 17.0)

        var target = SimHarness(seed: 2)
        target.now = 50
        target.connect()
        let outputs = target.device.importSession(session, now: target.now)
        let status = try #require(SimHarness.receiverStatuses(outputs).first)
        #expect(status.requestID == 0 && status.status.applications.first?.appID == "CC1AD845")
        #expect(SimHarness.advertisements(outputs).first?.busy == true)
        let transport = try #require(target.transportID)
        #expect(transport != source.transportID)
        target.connect(to: transport)
        let resumedStatus = target.mediaStatus()
        let resumed = try #require(resumedStatus)
        #expect(resumed.playerState == .buffering && resumed.currentTime == 17)
        #expect(resumed.media?.contentID == "http://example.com/movie.mp4" && resumed.media?.metadata?.title == "Travelling")
        target.advance(by: 0.25)
        target.advance(by: 3)
        let laterStatus = target.mediaStatus()
        let later = try #require(laterStatus)
        #expect(later.playerState == .playing && later.currentTime == 20)
        #expect(source.device.exportSession(now: source.now).map { _ in true } == true)
        #expect(SimHarness().device.exportSession(now: 0) == nil)
    }

    @Test func snapshotJSON() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR()
        sim.load()
        let json = sim.snapshot.json
        #expect(json["app"]?["transportId"] == .string(transport))
        #expect(json["senders"]?.array?.count == 2)
        #expect(json["media"]?["playerState"] == "BUFFERING" && json["media"]?["title"] == "A Movie")
        #expect(json["advertisement"]?["busy"] == true)
        #expect(json["ignoredMessages"] == 0)
        // It survives a round trip through the wire format.
        #expect(try JSONValue.parse(json.serialized()) == json)
    }

    @Test func backdropIsAnIdleScreen() throws {
        var sim = SimHarness(catalogue: [.defaultMediaReceiver, .backdrop])
        sim.connect()
        let outputs = sim.receiver("LAUNCH", ["appId": "E8C28D3C"])
        let app = try #require(SimHarness.receiverStatuses(outputs).first?.status.applications.first)
        #expect(app.isIdleScreen == true && app.displayName == "Backdrop")
        #expect(SimHarness.advertisements(outputs) == [DeviceAdvertisementState(busy: false, statusText: "", runningAppID: "E8C28D3C")])
    }

    @Test func contractDefaults() {
        #expect(PlaybackTiming().bufferingDelay == 0.2)
        #expect(AppDefinition.defaultMediaReceiver.supportedMediaCommands.rawValue == 274_447)
        #expect(AppDefinition.defaultMediaReceiver.appID == "CC1AD845" && AppDefinition.defaultMediaReceiver.isMediaPlayer)
        var sim = SimHarness(timing: PlaybackTiming())
        sim.launchDMR()
        sim.load()
        let deadline = sim.device.nextDeadline ?? 0
        #expect(abs(deadline - (sim.now + 0.2)) < 1e-9)
    }

    @Test func invalidGlobNeverMatches() throws {
        var sim = SimHarness(rules: [MediaRule(contentIdGlob: "[unclosed", loadError: .mediaDecode)])
        sim.launchDMR()
        #expect(SimHarness.mediaStatuses(sim.load(contentID: "[unclosed")).last?.status.first?.playerState == .buffering)
    }
}
