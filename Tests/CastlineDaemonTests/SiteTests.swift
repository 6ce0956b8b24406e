import CastlineJobs
import CastCore
import CastHTTP
import CastlineConfig
import CastlineDaemon
import Testing

@Suite struct SitePreflightTests {
    @Test func aPageWithoutFramingHeadersOverHTTPSIsFramed() {
        let checked = SitePreflight.judge(url: "https://board.example/", status: 200, headers: [("Content-Type", "text/html; charset=utf-8")])
        #expect(checked.contentType == "text/html")
        #expect(checked.refusesFrames == nil && !checked.mixedContent && checked.forceReason == nil)
    }

    @Test(arguments: [
        ("X-Frame-Options", "DENY", "X-Frame-Options: DENY"),
        ("x-frame-options", "sameorigin", "X-Frame-Options: SAMEORIGIN"),
        ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'", "frame-ancestors 'none'"),
        ("Content-Security-Policy", "frame-ancestors 'self' https://intranet.example", "frame-ancestors 'self' https://intranet.example"),
    ])
    func headersThatRefuseFramesForceThePage(name: String, value: String, named: String) throws {
        let checked = SitePreflight.judge(url: "https://board.example/", status: 200, headers: [(name, value)])
        let reason = try #require(checked.forceReason)
        #expect(reason.contains(named), "\(reason)")
    }

    @Test(arguments: ["frame-ancestors *", "frame-ancestors https:", "default-src 'self'"])
    func policiesThatLetAnHTTPSPageFrameItDoNot(policy: String) {
        let checked = SitePreflight.judge(url: "https://board.example/", status: 200, headers: [("Content-Security-Policy", policy)])
        #expect(checked.refusesFrames == nil)
    }

    @Test func anHTTPPageIsMixedContentInsideDashCast() {
        let checked = SitePreflight.judge(url: "http://10.0.0.5/board", status: 200, headers: [])
        #expect(checked.mixedContent && checked.forceReason?.contains("mixed content") == true)
    }

    @Test func webPagesAreHTMLWhateverTheParameters() {
        #expect(SitePreflight.isWebPage("text/html; charset=utf-8") && SitePreflight.isWebPage("application/xhtml+xml"))
        #expect(!SitePreflight.isWebPage("video/mp4") && !SitePreflight.isWebPage("text/plain"))
    }
}

@Suite struct SiteArgumentsTests {
    @Test func aPageTakesURLForceReloadAndPreflight() throws {
        let site = try SiteArguments(json: ["url": "https://board.example/", "force": true, "reload_every": 60, "preflight": false])
        #expect(site == .page(url: "https://board.example/", force: true, reloadEvery: 60, check: false))
        #expect(site.appID == "84912283" && site.namespace == "urn:x-cast:com.madmod.dashcast")
        #expect(try SiteArguments(json: ["url": "http://a.example/x"]) == .page(url: "http://a.example/x", force: nil, reloadEvery: 0, check: true))
    }

    @Test func aDashboardTakesItsView() throws {
        let site = try SiteArguments(json: ["home_assistant": ["view_path": "lobby", "url_path": "signage"]])
        #expect(site == .dashboard(viewPath: "lobby", urlPath: "signage"))
        #expect(site.appID == "A078F6B0" && site.label == "Home Assistant signage/lobby")
    }

    static let malformed: [(String, String)] = [
        (#"{}"#, "missing_url"),
        (#"{"url": "ftp://a.example/"}"#, "bad_url"),
        (#"{"url": "https://a.example/", "reload_every": -1}"#, "bad_reload_every"),
        (#"{"url": "https://a.example/", "home_assistant": {}}"#, "site_ambiguous"),
        (#"{"url": "https://a.example/", "forse": true}"#, "unknown_key"),
        (#"{"url": "https://a.example/", "force": "yes"}"#, "bad_type"),
        (#"{"home_assistant": {"view": "x"}}"#, "unknown_key"),
    ]

    @Test(arguments: malformed)
    func malformedSitesAreRefusedWithWhatToFix(body: String, code: String) throws {
        let json = try JSONValue.parse(body)
        do {
            _ = try SiteArguments(json: json)
            Issue.record("\(body) was accepted")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test func siteIsADeviceAction() throws {
        let command = try ControlAction.device("Lobby", action: "site", body: ["url": "https://a.example/"])
        #expect(command == .site("Lobby", .page(url: "https://a.example/", force: nil, reloadEvery: 0, check: true)))
        #expect(command.device == "Lobby")
    }
}

@Suite struct SiteJobTests {
    func siteJob(idleTimeout: Double) -> JobEntry {
        var job = JobEntry(name: "board", devices: ["*"], media: MediaEntry(url: "https://board.example/"))
        var site = SiteEntry(url: "https://board.example/")
        site.idleTimeout = idleTimeout
        job.site = site
        return job
    }

    static let dashCast = JobStateMachine.MediaObservation(playerState: "APP", isOurs: true)

    @Test func keepAlivesComeBeforeEachIdleTimeoutOnTheMachinesClock() {
        var machine = JobStateMachine(job: siteJob(idleTimeout: 20))
        #expect(machine.handle(.deviceFound(current: nil), now: 0) == [.cast(reason: "device found")])
        #expect(machine.handle(.castSucceeded, now: 1) == [])
        var sent: [Double] = []
        for second in 2...100 where machine.handle(.tick, now: Double(second)) == [.keepAlive] { sent.append(Double(second)) }
        // Every 13.3 s (two thirds of 20 s): never 20 s without the page being sent.
        #expect(sent == [15, 29, 43, 57, 71, 85, 99])
        #expect(machine.keepAlives == 7 && machine.casts == 1)
        #expect(zip([1] + sent, sent).allSatisfy { $1 - $0 < 20 })
    }

    @Test func aLongIdleTimeoutIsMetAMinuteEarlyAndNoStatusPollsAreSent() {
        var machine = JobStateMachine(job: siteJob(idleTimeout: 600))
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        _ = machine.handle(.castSucceeded, now: 0)
        var actions: [JobStateMachine.Action] = []
        for second in stride(from: 1.0, through: 600, by: 1) { actions += machine.handle(.tick, now: second) }
        #expect(actions == [.keepAlive], "one keep-alive at 540 s, and no media status requests (DashCast has none)")
    }

    @Test func theAppStoppingShowsThePageAgainAtOnce() {
        var machine = JobStateMachine(job: siteJob(idleTimeout: 600))
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        _ = machine.handle(.castSucceeded, now: 1)
        #expect(machine.handle(.media(Self.dashCast), now: 2) == [], "DashCast reports no media: the page is up")
        #expect(machine.handle(.sessionEnded(.appStopped), now: 30) == [.cast(reason: "the receiver app was stopped")])
    }

    @Test func theDevicesModelGivesTheIdleTimeoutWhenTheJobDoesNot() {
        var job = siteJob(idleTimeout: 20)
        #expect(JobStateMachine(job: job, idleTimeout: 30).keepAliveInterval == 40.0 / 3, "the job's own idle_timeout wins")
        job.site?.idleTimeout = nil
        #expect(JobStateMachine(job: job, idleTimeout: 30).keepAliveInterval == 20)
        #expect(JobStateMachine(job: job).keepAliveInterval == 540, "the default: 600 s")
        #expect(JobStateMachine(job: JobEntry(name: "m", devices: ["*"], media: MediaEntry(url: "http://a/m.mp4"))).keepAliveInterval == nil)
    }

    @Test func dashCastAlreadyRunningWhenTheDeviceIsFoundGetsThePageSent() {
        var machine = JobStateMachine(job: siteJob(idleTimeout: 600))
        #expect(machine.handle(.deviceFound(current: Self.dashCast), now: 0) == [.keepAlive])
        #expect(machine.state == .playing)
    }
}

@Suite struct QueueWindowTests {
    @Test func aPlaylistThatFitsIsLoadedWhole() {
        var window = QueueWindow(count: 3, size: 50, wraps: true)
        #expect(window.fits && window.loaded == [0, 1, 2])
        #expect(window.advance(playing: 2) == ([], 0), "the device repeats it itself")
    }

    @Test func aLongPlaylistMovesAlongAWindowAndWraps() {
        var window = QueueWindow(count: 10, size: 4, wraps: true)
        #expect(window.loaded == [0, 1, 2, 3])
        #expect(window.advance(playing: 1) == ([], 0), "far from the end: nothing yet")
        let first = window.advance(playing: 3)
        #expect(first.append == [4, 5] && first.removeFront == 2 && window.loaded == [2, 3, 4, 5])
        var played: [Int] = [0, 1, 2, 3]
        var position = 1
        for _ in 0..<20 {
            position += 1
            let step = window.advance(playing: min(position, window.loaded.count - 1))
            position -= step.removeFront
            played.append(window.loaded[min(position, window.loaded.count - 1)])
            #expect(window.loaded.count <= 4, "never more than the window on the device")
        }
        #expect(window.loaded.allSatisfy { (0..<10).contains($0) })
        #expect(Set(played).count == 10, "every item comes round, wrapping past the end")
    }

    /// A playlist handed back after an announcement starts at the item it was at.
    @Test func aResumedPlaylistStartsAtItsItem() {
        let fits = QueueWindow(count: 3, size: 50, wraps: true, start: 2)
        #expect(fits.loaded == [0, 1, 2] && fits.position(of: 2) == 2, "loaded whole, the device starts at the item")
        var long = QueueWindow(count: 10, size: 4, wraps: true, start: 8)
        #expect(long.loaded == [8, 9, 0, 1] && long.position(of: 8) == 0)
        #expect(long.advance(playing: 3).append == [2, 3])
        let end = QueueWindow(count: 10, size: 4, wraps: false, start: 8)
        #expect(end.loaded == [8, 9])
    }

    @Test func withoutRepeatTheWindowStopsAtTheEnd() {
        var window = QueueWindow(count: 6, size: 4, wraps: false)
        _ = window.advance(playing: 3)
        #expect(window.loaded == [2, 3, 4, 5])
        #expect(window.advance(playing: 3).append.isEmpty && window.loaded.last == 5)
    }
}

@Suite struct PlaylistTests {
    @Test func m3uEntriesAreResolvedAgainstThePlaylist() {
        let text = "#EXTM3U\r\n#EXTINF:10,One\r\none.mp3\r\n\r\n/music/two.flac\n  http://radio.example/three.aac  \n"
        #expect(Playlist.m3uItems(text, base: "/srv/lists/evening.m3u") == ["/srv/lists/one.mp3", "/music/two.flac", "http://radio.example/three.aac"])
        #expect(Playlist.m3uItems("one.mp3\nsub/two.mp3\n", base: "http://nas.local/lists/a.m3u8")
                == ["http://nas.local/lists/one.mp3", "http://nas.local/lists/sub/two.mp3"])
    }

    @Test func anHLSManifestIsAStreamNotAPlaylist() {
        #expect(Playlist.m3uItems("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\nseg0.ts\n", base: "/a.m3u8") == nil)
    }

    @Test func playlistPathsAreFoldersAndM3UFiles() {
        #expect(Playlist.isPlaylistPath("/srv/evening.m3u") && Playlist.isPlaylistPath("/srv/evening.M3U8"))
        #expect(Playlist.isPlaylistPath("/tmp"), "a folder")
        #expect(!Playlist.isPlaylistPath("/srv/movie.mp4") && !Playlist.isPlaylistPath("http://a/live.m3u8"))
    }
}
