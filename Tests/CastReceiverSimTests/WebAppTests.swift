import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

@Suite("Receiver simulator: web-page apps, the idle timeout, pages in the media receiver")
struct WebAppTests {
    static let dashNS: CastNamespace = "urn:x-cast:com.madmod.dashcast"
    static let hastNS: CastNamespace = "urn:x-cast:com.nabucasa.hast"
    static let catalogue: [AppDefinition] = [.defaultMediaReceiver, .dashCast, .homeAssistantDashboard]

    /// Launches `appID` for sender-0 and connects to it; its transportId.
    static func launch(_ appID: String, _ sim: inout SimHarness) throws -> String {
        sim.connect()
        sim.receiver("LAUNCH", ["appId": .string(appID)])
        let transport = try #require(sim.transportID)
        sim.connect(to: transport)
        return transport
    }

    static func page(_ sim: SimHarness) -> JSONValue? { sim.snapshot.app?.page }

    @Test func dashCastShowsTheURLItIsSentAndAnswersNothing() throws {
        var sim = SimHarness(catalogue: Self.catalogue)
        let transport = try Self.launch("84912283", &sim)
        #expect(sim.snapshot.app?.displayName == "DashCast")
        let outputs = sim.send(["url": "http://127.0.0.1:8080/dash.html", "force": false, "reload": true, "reload_time": 60000],
                               on: Self.dashNS, to: transport)
        #expect(SimHarness.sent(outputs).isEmpty, "DashCast answers nothing")
        #expect(Self.page(sim)?["url"]?.string == "http://127.0.0.1:8080/dash.html")
        #expect(Self.page(sim)?["reloadTime"]?.int == 60000)
        sim.send(["url": "https://example.com/", "force": true, "reload": true, "reload_time": 5000], on: Self.dashNS, to: transport)
        #expect(Self.page(sim)?["force"]?.bool == true)
        #expect(Self.page(sim)?["reloadTime"]?.int == 0, "a forced page cannot reload")
        #expect(sim.snapshot.app?.page?["url"]?.string == "https://example.com/")
    }

    @Test func homeAssistantConnectsShowsAViewAndSaysWhatIsWrong() throws {
        var sim = SimHarness(catalogue: Self.catalogue)
        let transport = try Self.launch("A078F6B0", &sim)
        func answer(_ message: JSONValue) -> JSONValue? {
            SimHarness.sent(sim.send(message, on: Self.hastNS, to: transport), on: Self.hastNS).first?.json
        }
        let early = answer(["type": "show_lovelace_view", "hassUrl": "https://ha.example", "viewPath": "lobby"])
        #expect(early?["type"]?.string == "receiver_error" && early?["error_code"]?.int == 21, "not connected")
        #expect(answer(["type": "connect", "refreshToken": "x", "hassUrl": "http://ha.example"])?["error_code"]?.int == 5, "https only")
        #expect(answer(["type": "connect", "refreshToken": "", "hassUrl": "https://ha.example"])?["error_code"]?.int == 2)
        #expect(answer(["type": "connect", "refreshToken": "x"])?["error_code"]?.int == 4)
        let connected = answer(["type": "connect", "refreshToken": "secret", "clientId": "c", "hassUrl": "https://ha.example",
                                "hassUUID": "u-1"])
        #expect(connected?["type"]?.string == "receiver_status" && connected?["connected"]?.bool == true)
        #expect(connected?["hassUrl"]?.string == "https://ha.example" && connected?["hassUUID"]?.string == "u-1")
        let wrong = answer(["type": "show_lovelace_view", "hassUrl": "https://other.example", "viewPath": "lobby"])
        #expect(wrong?["error_code"]?.int == 20, "another instance")
        let shown = answer(["type": "show_lovelace_view", "hassUrl": "https://ha.example", "hassUUID": "u-1", "viewPath": "lobby",
                            "urlPath": "signage"])
        #expect(shown?["lovelacePath"]?.string == "lobby" && shown?["urlPath"]?.string == "signage")
        #expect(Self.page(sim)?["lovelacePath"]?.string == "lobby")
        #expect(Self.page(sim)?.serialized().contains("secret") == false, "the token is not kept in what the device shows")
    }

    /// The clock is moved by hand: a dashboard stops `timeout` after its last use; a message to
    /// the app is a use; media playing keeps an app up.
    @Test func theIdleTimeoutStopsAnAppThatShowsNoMedia() throws {
        var sim = SimHarness(catalogue: Self.catalogue, timing: PlaybackTiming(bufferingDelay: 0.25, appIdleTimeout: 20))
        let transport = try Self.launch("84912283", &sim)
        #expect(sim.device.nextDeadline == 1020)
        #expect(sim.advance(by: 15).isEmpty)
        sim.send(["url": "http://127.0.0.1/a.html"], on: Self.dashNS, to: transport)
        #expect(sim.device.nextDeadline == 1035, "the message restarted the timer")
        #expect(sim.advance(by: 19.5).isEmpty && sim.transportID != nil)
        let stopped = sim.advance(by: 0.5)
        #expect(sim.transportID == nil, "stopped at 20 s without use")
        let closes = SimHarness.sent(stopped, on: .connection)
        #expect(closes.count == 1 && closes[0].type == "CLOSE", "the app's sender is told")
        #expect(SimHarness.receiverStatuses(stopped).first?.status.applications.isEmpty == true)

        var media = SimHarness(catalogue: Self.catalogue, timing: PlaybackTiming(bufferingDelay: 0.25, appIdleTimeout: 20))
        media.launchDMR()
        media.load(duration: 60)
        media.advance(by: 50)
        #expect(media.transportID != nil, "media playing keeps the app up past the timeout")
        // The clock moves as the server moves it: to each deadline (the media's end first).
        var steps = 0
        while let deadline = media.device.nextDeadline, deadline <= 1100, steps < 10 {
            media.advance(by: deadline - media.now)
            steps += 1
        }
        #expect(media.transportID == nil, "stopped once no media showed for 20 s")
        let ended: Double = 1000 + 0.25 + 60
        #expect(media.now == ended + 20, "20 s after the media ended (it started after 0.25 s of buffering)")
    }

    /// castline's receiver plays silent media of its own: the idle timeout that stops DashCast
    /// after 20 s leaves it alone, and it shows the page it is sent on its own namespace, framed.
    @Test func castlinesReceiverKeepsItselfAliveAndShowsItsPage() throws {
        var sim = SimHarness(catalogue: Self.catalogue + [.castlineReceiver], timing: PlaybackTiming(bufferingDelay: 0.25, appIdleTimeout: 20))
        let transport = try Self.launch(CastlineReceiver.simulatorAppID, &sim)
        sim.send(["url": "http://127.0.0.1/a.html", "force": false], on: CastNamespace(rawValue: CastlineReceiver.namespace), to: transport)
        #expect(sim.device.nextDeadline == nil, "no idle timer runs for it")
        #expect(sim.advance(by: 600).isEmpty && sim.transportID == transport)
        #expect(sim.snapshot.app?.page?["url"]?.string == "http://127.0.0.1/a.html" && sim.snapshot.app?.page?["blocked"] == nil)
    }

    @Test func everyBuiltInAppHasItsOwnID() {
        let apps: [AppDefinition] = [.defaultMediaReceiver, .dashCast, .homeAssistantDashboard, .castlineReceiver, .pluginExamples, .backdrop]
        #expect(Set(apps.map(\.appID)).count == apps.count, "\(apps.map(\.appID))")
    }

    @Test func theMediaReceiverRefusesAWebPage() throws {
        var sim = SimHarness(catalogue: Self.catalogue)
        sim.launchDMR()
        let outputs = sim.load(contentID: "http://127.0.0.1/dash.html", contentType: "text/html; charset=utf-8")
        let failed = try #require(SimHarness.mediaMessage(outputs, type: "LOAD_FAILED"))
        guard case .loadFailed(_, _, let code) = failed else { Issue.record("\(failed)"); return }
        #expect(code == .mediaSrcNotSupported)
        #expect(sim.snapshot.media == nil)
    }

    /// DashCast frames the URL in its https receiver page: a browser blocks an http frame as mixed
    /// content, so the TV stays blank; `force` navigates the whole page, which works.
    @Test("DashCast blocks an http page unless forced", arguments: [
        ("http://127.0.0.1/a.html", false, "mixed-content"), ("http://127.0.0.1/a.html", true, nil),
        ("https://example.com/", false, nil),
    ] as [(String, Bool, String?)])
    func mixedContent(url: String, force: Bool, blocked: String?) throws {
        var sim = SimHarness(catalogue: Self.catalogue)
        let transport = try WebAppTests.launch("84912283", &sim)
        sim.send(["url": .string(url), "force": .bool(force)], on: Self.dashNS, to: transport)
        #expect(sim.snapshot.app?.page?["blocked"]?.string == blocked)
    }
}
