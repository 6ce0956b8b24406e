import CastlineDaemon
import Testing

/// Who owns a screen, from the link, castline's claim and the app that runs.
@Suite struct ScreenOwnerTests {
    @Test func theClaimWinsWhileConnectedThenTheAppSays() {
        #expect(ScreenOwner.derive(connected: true, claim: "lobby", appID: "CC1AD845") == ScreenOwner(kind: .job, job: "lobby"))
        #expect(ScreenOwner.derive(connected: true, claim: CommandOwner.name, appID: "CC1AD845").kind == .command)
        #expect(ScreenOwner.derive(connected: true, claim: CommandOwner.announcement, appID: nil).kind == .announcement)
        #expect(ScreenOwner.derive(connected: true, claim: nil, appID: "233637DE").kind == .other)
        #expect(ScreenOwner.derive(connected: true, claim: nil, appID: nil).kind == .nobody)
    }

    @Test func aDeviceThatCannotBeSeenIsUnknownWhateverWasClaimed() {
        let owner = ScreenOwner.derive(connected: false, claim: "lobby", appID: "CC1AD845")
        #expect(owner.kind == .unknown && owner.name == "unknown")
        #expect(owner.reason(appID: nil) == "the device cannot be reached")
    }

    @Test func namesAndReasons() {
        #expect(ScreenOwner(kind: .job, job: "lobby").name == "lobby")
        #expect(ScreenOwner(kind: .nobody).name == nil)
        #expect(ScreenOwner(kind: .other).reason(appID: "233637DE") == "another sender's app runs (233637DE)")
    }
}

@Suite struct PageTitleTests {
    @Test func theFirstTitleDecodedAndFolded() {
        let html = Array("<!doctype html><HTML><head><TITLE lang=en>\n  Lobby &amp; Caf\u{E9}\n  board </title><title>second</title>".utf8)
        #expect(SitePreflight.pageTitle(html) == "Lobby & Café board")
        #expect(SitePreflight.pageTitle(Array("<html><body>no title</body></html>".utf8)) == nil)
        #expect(SitePreflight.pageTitle(Array("<title>unclosed".utf8)) == nil)
        #expect(SitePreflight.pageTitle(Array("<title>   </title>".utf8)) == nil)
        #expect(SitePreflight.pageTitle(Array(("<title>" + String(repeating: "x", count: 500) + "</title>").utf8))?.count == 200)
    }
}
