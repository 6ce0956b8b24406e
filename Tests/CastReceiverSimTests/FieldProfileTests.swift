import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

/// The field behaviour of ``FieldProfile`` on the pure device model, with a hand-moved clock:
/// idle closes and what resets them, the paused player's idle screen, launch outcomes, ambient
/// mode, HDMI-CEC, launches, and the profile's own arithmetic.
@Suite("Receiver simulator: field profiles")
struct FieldProfileTests {
    static let dashNS = WebAppTests.dashNS
    static let catalogue = WebAppTests.catalogue

    static func profile(_ edit: (inout FieldProfile) -> Void) -> FieldProfile {
        var profile = FieldProfile(name: "test")
        edit(&profile)
        return profile
    }

    // MARK: Idle timeouts

    @Test("idleResetBy media: a page message does not restart the timer; any-message: it does", arguments: [
        FieldProfile.IdleReset.media, .anyMessage,
    ])
    func whatResetsTheIdleTimer(reset: FieldProfile.IdleReset) throws {
        let field = Self.profile { $0.appIdleTimeout = 30; $0.idleResetBy = reset }
        var sim = SimHarness(catalogue: Self.catalogue, field: field)
        let transport = try WebAppTests.launch("84912283", &sim)
        #expect(sim.device.nextDeadline == 1030)
        sim.advance(by: 20)
        sim.send(["url": "https://127.0.0.1/a.html"], on: Self.dashNS, to: transport)
        #expect(sim.device.nextDeadline == (reset == .media ? 1030 : 1050))
        sim.advance(by: 10)
        #expect((sim.transportID == nil) == (reset == .media), "closed at 30 s only when the message did not count")
    }

    @Test func theGlobalOverridesWinOverTheProfile() throws {
        let field = Self.profile { $0.appIdleTimeout = 30; $0.idleResetBy = .media }
        var sim = SimHarness(catalogue: Self.catalogue,
                             timing: PlaybackTiming(bufferingDelay: 0.25, appIdleTimeout: 100, idleResetBy: .anyMessage), field: field)
        let transport = try WebAppTests.launch("84912283", &sim)
        #expect(sim.device.nextDeadline == 1100, "--app-idle-timeout wins")
        sim.advance(by: 50)
        sim.send(["url": "https://127.0.0.1/a.html"], on: Self.dashNS, to: transport)
        #expect(sim.device.nextDeadline == 1150, "--idle-reset-by any-message wins")
    }

    @Test func aLoadResetsTheTimerUnderTheMediaPolicy() {
        let field = Self.profile { $0.appIdleTimeout = 30; $0.idleResetBy = .media }
        var sim = SimHarness(field: field)
        sim.launchDMR()
        sim.advance(by: 20)
        sim.media("GET_STATUS")
        #expect(sim.device.nextDeadline == 1030, "a status query is no media activity")
        sim.load(duration: 5)
        sim.advance(by: 0.25)
        sim.advance(by: 5)
        #expect(sim.snapshot.media == nil && sim.device.nextDeadline == 1020 + 5.25 + 30, "30 s after the media ended")
    }

    @Test func aPausedPlayerGoesToTheIdleScreen() throws {
        let field = Self.profile { $0.pausedIdleTimeout = 1200 }
        var sim = SimHarness(field: field)
        sim.launchDMR()
        sim.load(duration: 600)
        sim.advance(by: 0.25)
        sim.advance(by: 10)
        sim.media("PAUSE", ["mediaSessionId": 1])
        let pausedAt = sim.now
        #expect(sim.device.nextDeadline == pausedAt + 1200)
        #expect(sim.advance(by: 1199.5).isEmpty && sim.snapshot.app?.appID == "CC1AD845")
        let out = sim.advance(by: 0.5)
        #expect(SimHarness.sent(out, on: .connection).first?.type == "CLOSE", "the player's sender is told")
        let status = try #require(SimHarness.receiverStatuses(out).last?.status)
        #expect(status.applications.first?.appID == "E8C28D3C" && status.applications.first?.isIdleScreen == true)
        #expect(sim.snapshot.screen?.shows == .ambient)

        var playing = SimHarness(field: field)
        playing.launchDMR()
        playing.load(duration: 6000)
        playing.advance(by: 2000)
        #expect(playing.snapshot.app?.appID == "CC1AD845", "only a paused player goes")
    }

    // MARK: Launches

    @Test func launchTimeAndThePageAppsExtra() throws {
        let field = Self.profile { $0.launch = .init(readyAfter: 2, pageAppExtra: 10) }
        var sim = SimHarness(catalogue: Self.catalogue, field: field)
        sim.connect()
        sim.receiver("LAUNCH", ["appId": "84912283"])
        #expect(sim.device.nextDeadline == 1012)
        #expect(SimHarness.receiverStatuses(sim.advance(by: 11.5)).isEmpty)
        let ready = SimHarness.receiverStatuses(sim.advance(by: 0.5))
        #expect(ready.first?.requestID == RequestID(1) && sim.snapshot.app?.appID == "84912283")
        sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        #expect(sim.device.nextDeadline == 1014, "the media receiver: no page to fetch")
    }

    @Test func aCancelledLaunchIsAnsweredAndStartsNothing() {
        let field = Self.profile { $0.launch = .init(readyAfter: 1, cancelledProbability: 1) }
        var sim = SimHarness(field: field)
        sim.connect()
        sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        let out = SimHarness.receiverMessages(sim.advance(by: 1))
        guard case .launchError(let id, let reason)? = out.first?.message else {
            Issue.record("expected LAUNCH_ERROR, got \(out.map(\.sent.json))")
            return
        }
        #expect(id == RequestID(1) && reason == .cancelled)
        #expect(sim.snapshot.app == nil)
    }

    @Test func aHungLaunchIsNeverAnsweredAndTheNextOneIs() {
        var sim = SimHarness()   // the ideal profile: hangs only on the control socket's word
        sim.device.hangLaunches(1)
        sim.connect()
        let first = sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        #expect(SimHarness.receiverMessages(first).isEmpty && sim.device.nextDeadline == nil)
        #expect(sim.advance(by: 3600).isEmpty && sim.snapshot.app == nil, "no reply, no app, an hour later")
        let second = SimHarness.receiverStatuses(sim.receiver("LAUNCH", ["appId": "CC1AD845"]))
        #expect(second.first?.requestID == RequestID(2), "the hung one gets nothing, the next one its answer")
        #expect(sim.snapshot.app?.appID == "CC1AD845")
    }

    /// Outcomes drawn with the profile's chances from the seed: the same seed repeats them.
    static func outcomes(seed: UInt64, count: Int) -> [String] {
        let field = profile { $0.launch = .init(readyAfter: 0, cancelledProbability: 0.3, hangProbability: 0.2) }
        var sim = SimHarness(seed: seed, field: field)
        sim.connect()
        var result: [String] = []
        for _ in 0..<count {
            let out = SimHarness.receiverMessages(sim.receiver("LAUNCH", ["appId": "CC1AD845"]))
            switch out.first?.message {
            case .receiverStatus?: result.append("ready")
            case .launchError(_, .some(.cancelled))?: result.append("cancelled")
            case nil: result.append("hang")
            default: result.append("other")
            }
            if let session = sim.snapshot.app?.sessionID { sim.receiver("STOP", ["sessionId": .string(session)]) }
        }
        return result
    }

    @Test func launchOutcomesFollowTheChancesAndTheSeed() {
        let run = Self.outcomes(seed: 7, count: 400)
        #expect(run == Self.outcomes(seed: 7, count: 400), "the same seed, the same outcomes")
        #expect(run != Self.outcomes(seed: 8, count: 400))
        let counts = Dictionary(grouping: run) { $0 }.mapValues(\.count)
        #expect(counts["other"] == nil)
        // 400 draws: binomial standard deviations are 9.2 (p 0.3) and 8 (p 0.2); 4 σ bounds.
        #expect((84...156).contains(counts["cancelled"] ?? 0), "\(counts)")
        #expect((48...112).contains(counts["hang"] ?? 0), "\(counts)")
    }

    // MARK: Ambient, CEC, the screen

    @Test func ambientModeCoversARunningPageButNotPlayingMedia() throws {
        let field = Self.profile { $0.ambient = .init(after: 600, coversApp: true) }
        var sim = SimHarness(catalogue: Self.catalogue, field: field)
        _ = try WebAppTests.launch("84912283", &sim)
        #expect(sim.snapshot.screen == ScreenState(shows: .app, appVisible: true))
        #expect(sim.device.nextDeadline == 1600)
        #expect(sim.advance(by: 600).isEmpty, "nothing on the wire")
        #expect(sim.snapshot.screen == ScreenState(shows: .ambient, appVisible: false, coveredBy: "ambient"))
        let status = try #require(SimHarness.receiverStatuses(sim.receiver("GET_STATUS")).first?.status)
        #expect(status.applications.first?.appID == "84912283", "RECEIVER_STATUS still lists the app")
        sim.receiver("LAUNCH", ["appId": "84912283"])
        #expect(sim.snapshot.screen?.appVisible == true, "a LAUNCH of the running app brings it to the front")

        var media = SimHarness(field: field)
        media.launchDMR()
        media.load(duration: 5000)
        media.advance(by: 1200)
        #expect(media.snapshot.screen?.shows == .app, "playing media keeps ambient mode away")
    }

    @Test func theControlCoverAndAnAmbientThatLeavesAppsAlone() throws {
        let field = Self.profile { $0.ambient = .init(after: 60, coversApp: false) }
        var sim = SimHarness(catalogue: Self.catalogue, field: field)
        _ = try WebAppTests.launch("84912283", &sim)
        sim.advance(by: 120)
        #expect(sim.snapshot.screen?.shows == .app)
        #expect(sim.device.cover(true, now: sim.now).isEmpty)
        #expect(sim.snapshot.screen == ScreenState(shows: .ambient, appVisible: false, coveredBy: "control"))
        _ = sim.device.cover(false, now: sim.now)
        #expect(sim.snapshot.screen?.appVisible == true)
    }

    @Test func standbyAndAnotherInputAreReportedOverCEC() throws {
        var chromecast = FieldProfile.chromecast
        chromecast.launch = .init()   // at once, so the harness sees the app
        var sim = SimHarness(catalogue: Self.catalogue, field: chromecast)
        sim.launchDMR()
        let off = SimHarness.receiverStatuses(sim.device.setStandby(true, now: sim.now))
        #expect(off.first?.requestID == .unsolicited && off.first?.status.isStandBy == true && off.first?.status.isActiveInput == false)
        #expect(sim.snapshot.screen == ScreenState(shows: .off, appVisible: false))
        _ = sim.device.setStandby(false, now: sim.now)
        let other = SimHarness.receiverStatuses(sim.device.setOtherInput(true, now: sim.now))
        #expect(other.first?.status.isActiveInput == false && other.first?.status.isStandBy == false)
        #expect(sim.snapshot.screen?.shows == .otherInput)
        // One-touch play: a LAUNCH takes the input back.
        let back = SimHarness.receiverStatuses(sim.receiver("LAUNCH", ["appId": "CC1AD845"]))
        #expect(back.first?.status.isActiveInput == true && sim.snapshot.screen?.shows == .app)
    }

    @Test func aModelWithoutCECReportsNeitherField() throws {
        var hub = FieldProfile.nestHub
        hub.launch = .init()   // at once and never CANCELLED: this test is about CEC
        var sim = SimHarness(catalogue: Self.catalogue, field: hub)
        sim.launchDMR()
        let out = sim.device.setStandby(true, now: sim.now)
        #expect(SimHarness.receiverStatuses(out).isEmpty, "no CEC, no status change on the wire")
        let status = try #require(SimHarness.receiverStatuses(sim.receiver("GET_STATUS")).first)
        #expect(status.sent.json["status"]?["isStandBy"] == nil && status.sent.json["status"]?["isActiveInput"] == nil)
        #expect(sim.snapshot.screen?.shows == .off, "the truth is there though the device does not say it")
        sim.receiver("LAUNCH", ["appId": "84912283"])
        #expect(sim.snapshot.screen?.shows == .off, "without one-touch play a cast does not wake the TV")
    }

    // MARK: The profile's own arithmetic

    @Test func aDailyRebootFallsInItsWindowOncePerDay() {
        let reboot = FieldProfile.DailyReboot(windowStart: 15 * 3600, windowLength: 3600, downFor: 60)
        #expect(reboot.secondsUntilReboot(dayPosition: 14 * 3600, draw: 0.5) == 5400)
        #expect(reboot.secondsUntilReboot(dayPosition: 16 * 3600, draw: 0) == 23 * 3600, "past the window: tomorrow's")
        #expect(reboot.secondsUntilReboot(dayPosition: 15.5 * 3600, draw: 0.5, minimumDelay: 3660) == 86_400,
                "right after a reboot: not again the same day")
        let fast = FieldProfile(name: "x", dailyReboot: reboot).scaled(by: 60).dailyReboot!
        #expect(fast.dayLength == 1440 && fast.windowStart == 900 && fast.downFor == 1)
        #expect(fast.secondsUntilReboot(dayPosition: 840, draw: 0) == 60)
    }

    @Test func scalingDividesEveryDurationAndNothingElse() {
        let scaled = FieldProfile.nestHub.scaled(by: 60)
        #expect(scaled.appIdleTimeout == 10 && scaled.pausedIdleTimeout == 20 && scaled.ambient?.after == 10)
        #expect(scaled.launch.cancelledProbability == FieldProfile.nestHub.launch.cancelledProbability)
        #expect(scaled.reportsCEC == FieldProfile.nestHub.reportsCEC && scaled.idleResetBy == .media)
        #expect(FieldProfile.nestHubFuchsia.appIdleTimeout == 30 && FieldProfile.nestHubFuchsia.name == "nest-hub-fuchsia")
    }

    @Test("models map to their profiles", arguments: [
        ("Chromecast", true, "chromecast"), ("Google Nest Hub", true, "nest-hub"), ("Chromecast with Google TV", true, "chromecast-google-tv"),
        ("Google Home Mini", false, "speaker"), ("Chromecast Audio", false, "speaker"), ("BRAVIA 4K", true, "cast-tv"),
    ] as [(String, Bool, String)])
    func modelProfiles(model: String, video: Bool, name: String) {
        #expect(FieldProfile.forModel(model, isVideoDevice: video).name == name)
    }
}
