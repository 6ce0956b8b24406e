import CastCore
import CastLogging
import CastSender
import CastlineConfig
import CastlineJobs
import Foundation
import Testing

@Suite struct FieldKnowledgeTests {
    static let hub = CastDevice(id: "hub1", friendlyName: "Kitchen", host: "127.0.0.1", modelName: "Google Nest Hub")
    static let dongle = CastDevice(id: "cc1", friendlyName: "Lobby", host: "127.0.0.1", modelName: "Chromecast")
    static let page: JobEntry = {
        var job = JobEntry(name: "board", devices: ["*"], media: MediaEntry(url: "https://board.example/"))
        job.site = SiteEntry(url: "https://board.example/")
        return job
    }()
    static let googleTV = CastDevice(id: "gtv", friendlyName: "Bar", host: "127.0.0.1", modelName: "Chromecast with Google TV")

    func book(_ yaml: String = "", path: String? = nil) throws -> FieldKnowledgeBook {
        let (config, _) = try CastlineConfiguration.parse(yaml, file: "c.yaml")
        return FieldKnowledgeBook(settings: config.daemon, path: path, logSystem: LogSystem())
    }

    @Test func theModelPicksTheProfileAndItsFacts() throws {
        let book = try book()
        let hub = book.knowledge(for: Self.hub)
        #expect(hub.profile.name == "nest-hub" && hub.idleTimeout == 600 && hub.idleResetBy == .media)
        #expect(!hub.keepAliveResetsTimer, "only media resets a Nest Hub's timer")
        #expect(JobStateMachine(job: Self.page, idleTimeout: hub.idleTimeout, keepAlive: hub.keepAliveResetsTimer).keepAliveInterval == nil,
                "no keep-alive")
        let dongle = book.knowledge(for: Self.dongle)
        #expect(dongle.profile.name == "chromecast" && dongle.idleTimeout == nil && dongle.keepAliveResetsTimer)
        #expect(book.knowledge(for: Self.googleTV).idleTimeout == 180)
        // A web page app on a Nest Hub takes over 10 s to come up: the bound is three times that.
        #expect(abs(hub.launchBound(pageApp: true, floor: 10) - 36.3) < 0.01)
        #expect(dongle.launchBound(pageApp: false, floor: 10) == 10)
    }

    @Test func theConfigOverridesTheProfileAndTheJobTheConfig() throws {
        let book = try book("""
            daemon:
              field_profiles:
                "Google Nest Hub*": {profile: nest-hub-fuchsia, idle_reset_by: any-message}
                "Chromecast": {idle_timeout: never}
              idle_timeouts: {"Chromecast with*": 90}
            """)
        let hub = book.knowledge(for: Self.hub)
        #expect(hub.profile.name == "nest-hub-fuchsia" && hub.idleTimeout == 30 && hub.idleResetBy == .anyMessage)
        #expect(hub.idleResetSource == "daemon.field_profiles \"Google Nest Hub*\"")
        #expect(JobStateMachine(job: Self.page, idleTimeout: hub.idleTimeout, keepAlive: hub.keepAliveResetsTimer).keepAliveInterval == 20)
        #expect(book.knowledge(for: Self.dongle).idleTimeout == nil)
        #expect(book.knowledge(for: Self.googleTV).idleTimeout == 90)
        let job = book.knowledge(for: Self.googleTV, jobIdleTimeout: 45)
        #expect(job.idleTimeout == 45 && job.idleTimeoutSource == "the job's idle_timeout")
    }

    @Test func aTimeScaleDividesWhatTheProfileAndTheConfigSay() throws {
        let book = try book("daemon: {field_time_scale: 60, idle_timeouts: {\"Chromecast with*\": 120}}\n")
        let hub = book.knowledge(for: Self.hub)
        #expect(hub.idleTimeout == 10 && hub.profile.launch.pageAppExtra == 10.0 / 60)
        #expect(book.knowledge(for: Self.googleTV).idleTimeout == 2)
    }

    @Test func configMistakesAreReportedWhereTheyAre() throws {
        func errors(_ yaml: String) -> [String] {
            do { _ = try CastlineConfiguration.parse(yaml, file: "c.yaml") } catch { return error.diagnostics.map(\.description) }
            return []
        }
        #expect(errors("daemon: {field_profiles: {Hub: nest-hubb}}\n").first?.hasPrefix("c.yaml:1:32: error: daemon.field_profiles.Hub") == true)
        #expect(errors("daemon: {field_profiles: {Hub: {idle_reset_by: sometimes}}}\n").count == 1)
        #expect(errors("daemon: {field_profiles: {Hub: {idle_timeout: 0}}}\n").count == 1)
        #expect(errors("daemon: {field_time_scale: 0}\n").count == 1)
        #expect(errors("jobs: [{name: a, devices: [x], media: http://a/b.mp4, screen_off: blink}]\n").count == 1)
        let (config, _) = try CastlineConfiguration.parse("jobs: [{name: a, devices: [x], media: http://a/b.mp4, screen_off: wake}]\n", file: "c.yaml")
        #expect(config.jobs[0].screenOff == .wake)
    }

    @Test func configCheckNamesThePagesNoKeepAliveCanHold() throws {
        let yaml = """
            devices:
              - {name: Kitchen, host: 192.0.2.10, model: Google Nest Hub}
              - {name: Lobby, host: 192.0.2.11, model: Chromecast}
            jobs:
              - {name: board, devices: ["*"], site: {url: "https://board.example/"}}
              - {name: film, devices: [Kitchen], media: http://a/b.mp4}
            """
        let (config, _) = try CastlineConfiguration.parse(yaml, file: "c.yaml")
        let warnings = config.fieldWarnings()
        #expect(warnings.count == 1, "the page on the hub; not the dongle (a message resets its timer), not the film")
        #expect(warnings.first?.description.hasPrefix("c.yaml:5:5: warning: jobs[0] \"board\" shows a page on Kitchen (model Google Nest Hub, profile nest-hub)") == true,
                "\(warnings)")
        #expect(warnings.first?.description.contains("about every 600 s") == true)
        // The operator's word on the model stands: no warning.
        let (told, _) = try CastlineConfiguration.parse(yaml + "\ndaemon: {field_profiles: {\"Google Nest Hub\": {idle_reset_by: any-message}}}\n", file: "c.yaml")
        #expect(told.fieldWarnings().isEmpty)
    }

    // MARK: Learning

    @Test func aCloseWithoutKeepAlivesMeasuresTheTimeout() {
        let learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 31, sinceLastSend: 31, keepAlives: 0), previous: nil, model: "Hub", now: 1)
        #expect(learned.idleTimeout == 31 && learned.idleResetBy == nil && learned.observations == 1)
    }

    @Test func twoClosesAtTheSameTimeDespiteKeepAlivesMeanOnlyMediaResetsTheTimer() {
        // The profile guessed 600 s, any message: a keep-alive at 400 s, a close at 300 s since launch.
        var learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 300, sinceLastSend: 300, keepAlives: 0), previous: nil, model: "TV", now: 1)
        #expect(learned.idleTimeout == 300 && learned.idleResetBy == nil)
        // Keep-alives every 200 s now; the device still closes 300 s after the launch.
        learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 302, sinceLastSend: 102, keepAlives: 1), previous: learned, model: "TV", now: 2)
        #expect(learned.idleResetBy == nil && learned.idleTimeout == 102, "one close after a keep-alive: the timeout may be shorter")
        learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 299, sinceLastSend: 99, keepAlives: 3), previous: learned, model: "TV", now: 3)
        #expect(learned.idleResetBy == .media && learned.idleTimeout == 299)
    }

    @Test func closesAfterKeepAlivesAtDifferentTimesSinceLaunchShortenTheTimeoutInstead() {
        var learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 500, sinceLastSend: 100, keepAlives: 1), previous: nil, model: "TV", now: 1)
        learned = LearnedIdle.learn(IdleCloseObservation(sinceMedia: 200, sinceLastSend: 90, keepAlives: 1), previous: learned, model: "TV", now: 2)
        #expect(learned.idleResetBy == nil && learned.idleTimeout == 90)
    }

    @Test func whatWasLearnedOverridesTheProfileAndSurvivesARestart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("field-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/field-learned.json"
        let first = try book(path: path)
        first.record(IdleCloseObservation(sinceMedia: 30.5, sinceLastSend: 30.5, keepAlives: 0), device: Self.hub, now: 100)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let second = try book(path: path)
        let hub = second.knowledge(for: Self.hub)
        #expect(hub.idleTimeout == 30.5 && hub.idleTimeoutSource.hasPrefix("learned"))
        #expect(hub.idleResetBy == .media, "the profile's reset rule stands until a close says otherwise")
        // The config still wins over what was learned.
        let configured = try book("daemon: {idle_timeouts: {\"Google Nest Hub\": 45}}\n", path: path)
        #expect(configured.knowledge(for: Self.hub).idleTimeout == 45)
    }

    @Test func anUnreadableLearnedFileStartsAfresh() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("field-bad-\(getpid()).json").path
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try book(path: path).knowledge(for: Self.hub).idleTimeout == 600)
    }
}

@Suite struct ScreenReadingTests {
    func inputs(_ status: ReceiverStatus?, app: Bool = true, profile: FieldProfile = .chromecast, since: Double = 0, playing: Bool = false,
                lastPlayed: Double? = nil, now: Double = 1, connected: Bool = true) -> ScreenReading.Inputs {
        ScreenReading.Inputs(connected: connected, status: status.map(CastDeviceStatus.init), app: app ? ApplicationInfo(appID: "84912283", displayName: "DashCast", sessionID: "s1", transportID: "s1") : nil,
                             appSince: since, mediaPlaying: playing, lastPlayed: lastPlayed, profile: profile, now: now)
    }

    @Test func whatTheDeviceReportsComesFirst() {
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: true, isStandBy: false))) == ScreenReading(visible: true, source: .device))
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: true, isStandBy: true))) == ScreenReading(visible: false, reason: .standby, source: .device))
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: false, isStandBy: false))) == ScreenReading(visible: false, reason: .otherInput, source: .device))
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: true, isStandBy: false), app: false)).reason == .idleScreen)
    }

    @Test func withoutAConnectionOrCECFieldsOnATVItIsNotKnown() {
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: true, isStandBy: false), connected: false)) == .unknown)
        #expect(ScreenReading.read(inputs(ReceiverStatus(), profile: .castTV)) == .unknown)
        #expect(ScreenReading.read(inputs(ReceiverStatus(), profile: .nestHub)) == .unknown, "a hub's screen may sleep, and nothing says")
        #expect(ScreenReading.read(inputs(ReceiverStatus(isActiveInput: false, isStandBy: false), app: false)).reason == .idleScreen,
                "no app: the idle screen, whatever isActiveInput says")
    }

    @Test func ambientModeCoversAPageByTheProfilesClockNotWhileMediaPlays() {
        let profile = FieldProfile.chromecastGoogleTV   // covers a running app after 600 s without media
        #expect(ScreenReading.coverDeadline(inputs(ReceiverStatus(), profile: profile, since: 100)) == 700)
        #expect(ScreenReading.read(inputs(ReceiverStatus(), profile: profile, since: 100, now: 699)) == .unknown)
        #expect(ScreenReading.read(inputs(ReceiverStatus(), profile: profile, since: 100, now: 700)) == ScreenReading(visible: false, reason: .covered, source: .profile))
        #expect(ScreenReading.coverDeadline(inputs(ReceiverStatus(), profile: profile, since: 100, playing: true)) == nil)
        #expect(ScreenReading.coverDeadline(inputs(ReceiverStatus(), profile: profile, since: 100, lastPlayed: 500)) == 1100,
                "the clock starts again when media last played")
        #expect(ScreenReading.coverDeadline(inputs(ReceiverStatus(), profile: .castTV, since: 100)) == nil, "no ambient mode over apps")
    }
}

@Suite struct JobFieldPolicyTests {
    func siteJob(screenOff: JobEntry.ScreenOffPolicy = .report) -> JobEntry {
        var job = JobEntry(name: "board", devices: ["*"], media: MediaEntry(url: "https://board.example/"))
        job.site = SiteEntry(url: "https://board.example/")
        job.screenOff = screenOff
        job.retryDelay = 5
        return job
    }

    static let page = JobStateMachine.MediaObservation(playerState: "APP", isOurs: true)

    func playing(_ job: JobEntry, keepAlive: Bool = true) -> JobStateMachine {
        var machine = JobStateMachine(job: job, idleTimeout: 30, keepAlive: keepAlive)
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        _ = machine.handle(.castSucceeded, now: 1)
        return machine
    }

    @Test func whereOnlyMediaResetsTheTimerNoKeepAliveIsSentAndACloseRelaunchesAtOnce() {
        var machine = playing(siteJob(), keepAlive: false)
        #expect(machine.keepAliveInterval == nil)
        for second in 2...100 { #expect(machine.handle(.tick, now: Double(second)).isEmpty) }
        #expect(machine.handle(.sessionEnded(.appStopped), now: 101) == [.cast(reason: "the receiver app was stopped")])
        #expect(machine.lastCause == .appClosed)
    }

    @Test func aCancelledLaunchIsRetriedOnceAtOnceThenBacksOff() {
        var machine = JobStateMachine(job: siteJob())
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        #expect(machine.handle(.launchCancelled("CANCELLED"), now: 1) == [.cast(reason: "the launch was cancelled (CANCELLED): once more at once")])
        #expect(machine.lastCause == .launchCancelled)
        #expect(machine.handle(.launchCancelled("CANCELLED"), now: 2).isEmpty)
        #expect(machine.state == .backingOff(until: 7))
        #expect(machine.handle(.tick, now: 7) == [.cast(reason: "retry 1")] && machine.lastCause == .retry)
        _ = machine.handle(.castSucceeded, now: 8)
        _ = machine.handle(.sessionEnded(.appStopped), now: 9)
        #expect(machine.handle(.launchCancelled("CANCELLED"), now: 10).count == 1, "a success clears the once")
    }

    @Test func aDarkScreenIsWokenOnlyUnderWakeAndWithTheBackoff() {
        let covered = ScreenReading(visible: false, reason: .covered, source: .profile)
        var report = playing(siteJob())
        #expect(report.handle(.screen(covered), now: 5).isEmpty, "screen_off: report only reports")
        var wake = playing(siteJob(screenOff: .wake))
        #expect(wake.handle(.screen(covered), now: 5) == [.cast(reason: "the screen shows no app (covered); screen_off: wake")])
        #expect(wake.lastCause == .screenOff && wake.wakes == 1)
        _ = wake.handle(.castSucceeded, now: 6)
        #expect(wake.handle(.screen(ScreenReading(visible: false, reason: .standby, source: .device)), now: 7).isEmpty,
                "within the backoff (5 s after the first wake)")
        #expect(wake.handle(.screen(ScreenReading(visible: false, reason: .standby, source: .device)), now: 10).count == 1)
        _ = wake.handle(.castSucceeded, now: 11)
        // Still dark, and no new reading: the tick wakes it again once the backoff (10 s) is over.
        #expect(wake.handle(.tick, now: 15).isEmpty)
        #expect(wake.handle(.tick, now: 20) == [.cast(reason: "the screen shows no app (standby); screen_off: wake")])
        _ = wake.handle(.castSucceeded, now: 21)
        #expect(wake.handle(.screen(.unknown), now: 30).isEmpty, "not known is not dark")
        #expect(wake.handle(.tick, now: 200) == [.keepAlive], "nothing dark known: no wake, the keep-alive alone")
        #expect(wake.handle(.screen(ScreenReading(visible: false, reason: .idleScreen, source: .device)), now: 30).isEmpty,
                "no app: the app's own loss recasts it")
        _ = wake.handle(.screen(ScreenReading(visible: true, source: .device)), now: 31)
        #expect(wake.wakes == 0)
    }
}
