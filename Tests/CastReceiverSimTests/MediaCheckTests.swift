import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

/// LOADs of loopback media wait for the server's fetch: the reply comes when the media loads;
/// a failure answers LOAD_FAILED and ends the session IDLE / ERROR; media elsewhere plays
/// unchecked. Driven with a hand-moved clock.
@Suite("Media check of LOADs")
struct MediaCheckTests {
    static let loopback = "http://127.0.0.1:8099/clip.mp4"

    static func harness() -> SimHarness {
        SimHarness(timing: PlaybackTiming(bufferingDelay: 0.25, checksLoopbackMedia: true))
    }

    static func checks(_ outputs: [DeviceOutput]) -> [MediaCheckRequest] {
        outputs.compactMap { if case .checkMedia(let request) = $0 { return request } else { return nil } }
    }

    @Test("a loopback LOAD: only the LOADING status until the fetch; then the reply to its requestId and PLAYING after buffering")
    func waitsThenPlays() throws {
        var sim = Self.harness()
        sim.launchDMR()
        let outputs = sim.load(contentID: Self.loopback)
        let loadID = Int64(sim.nextRequestID - 1)
        let request = try #require(Self.checks(outputs).first)
        #expect(request.url == Self.loopback)
        #expect(request.contentType == "video/mp4")
        #expect(SimHarness.sent(outputs, on: .media).allSatisfy { $0.requestID == 0 }, "no reply before the fetch")
        // Waiting: GET_STATUS shows the loading shape; the clock does not start buffering.
        let waitingStatus = sim.mediaStatus()
        let waiting = try #require(waitingStatus)
        #expect(waiting.playerState == .idle && waiting.extendedStatus?.playerState == .loading)
        #expect(sim.device.nextDeadline == nil)
        sim.now += 2
        let done = sim.device.mediaChecked(mediaSessionID: request.mediaSessionID, failure: nil, reason: "HTTP 206, MP4", now: sim.now)
        let reply = try #require(SimHarness.mediaStatuses(done).first { $0.requestID == RequestID(Int(loadID)) })
        #expect(reply.sent.connection == 1)
        #expect(reply.status.first?.playerState == .buffering)
        #expect(SimHarness.mediaStatuses(sim.advance(by: 0.25)).first?.status.first?.playerState == .playing)
    }

    @Test("a failed fetch: LOAD_FAILED with the code to the LOAD's sender, then IDLE / ERROR to every sender; the session is gone")
    func failureEndsInError() throws {
        var sim = Self.harness()
        let transport = sim.launchDMR()
        sim.connect(2, sender: "sender-9", to: transport)
        let outputs = sim.load(contentID: Self.loopback)
        let loadID = Int64(sim.nextRequestID - 1)
        let request = try #require(Self.checks(outputs).first)
        let failed = sim.device.mediaChecked(mediaSessionID: request.mediaSessionID, failure: .mediaSrcNotSupported,
                                             reason: "HTTP 404", now: sim.now)
        let sent = SimHarness.sent(failed, on: .media)
        #expect(sent.map(\.type) == ["LOAD_FAILED", "MEDIA_STATUS", "MEDIA_STATUS"])
        #expect(sent[0].connection == 1 && sent[0].requestID == loadID)
        #expect(sent[0].json["detailedErrorCode"]?.int == 104)
        let statuses = SimHarness.mediaStatuses(failed)
        #expect(Set(statuses.map(\.sent.connection)) == [1, 2])
        for status in statuses {
            #expect(status.requestID == .unsolicited)
            #expect(status.status.first?.playerState == .idle)
            #expect(status.status.first?.idleReason == .error)
            #expect(status.status.first?.mediaSessionID == request.mediaSessionID)
        }
        #expect(sim.mediaStatus() == nil, "no media session after the failure")
        #expect(sim.snapshot.rejectedMessages == 1)
    }

    @Test("a second LOAD while the first waits cancels it: LOAD_CANCELLED to the first LOAD's sender; a late report for it does nothing")
    func replacedWhileWaiting() throws {
        var sim = Self.harness()
        let transport = sim.launchDMR()
        sim.connect(2, sender: "sender-0", to: transport)
        let first = try #require(Self.checks(sim.load(contentID: Self.loopback)).first)
        let firstID = Int64(sim.nextRequestID - 1)
        let outputs = sim.load(contentID: "http://127.0.0.1:8099/other.mp4", connection: 2)
        let cancelled = try #require(SimHarness.sent(outputs, on: .media).first { $0.type == "LOAD_CANCELLED" })
        #expect(cancelled.connection == 1 && cancelled.requestID == firstID)
        let second = try #require(Self.checks(outputs).first)
        #expect(second.mediaSessionID != first.mediaSessionID)
        #expect(SimHarness.sent(sim.device.mediaChecked(mediaSessionID: first.mediaSessionID, failure: .mediaSrcNotSupported,
                                                         reason: "late", now: sim.now)).isEmpty)
        let answered = sim.device.mediaChecked(mediaSessionID: second.mediaSessionID, failure: nil, reason: "ok", now: sim.now)
        let reply = try #require(SimHarness.mediaStatuses(answered).first { $0.requestID != .unsolicited })
        #expect(reply.sent.connection == 2, "the second LOAD's sender gets its reply")
    }

    @Test("STOP while waiting: the LOAD is cancelled, STOP answered with IDLE / CANCELLED")
    func stoppedWhileWaiting() throws {
        var sim = Self.harness()
        sim.launchDMR()
        let request = try #require(Self.checks(sim.load(contentID: Self.loopback)).first)
        let outputs = sim.media("STOP", ["mediaSessionId": .int(Int64(request.mediaSessionID))])
        #expect(SimHarness.sent(outputs, on: .media).map(\.type).contains("LOAD_CANCELLED"))
        #expect(SimHarness.mediaStatuses(outputs).contains { $0.status.first?.idleReason == .cancelled })
    }

    @Test("media elsewhere (and https on loopback) plays unchecked, reported as such", arguments: [
        "http://example.com/movie.mp4", "https://127.0.0.1/a.mp4", "http://10.0.0.5/a.mp4",
    ])
    func unchecked(url: String) {
        var sim = Self.harness()
        sim.launchDMR()
        let outputs = sim.load(contentID: url)
        #expect(Self.checks(outputs).isEmpty)
        #expect(outputs.contains(.mediaNotChecked(url: url)))
        #expect(SimHarness.mediaStatuses(outputs).contains { $0.requestID == RequestID(sim.nextRequestID - 1) })
    }

    @Test("contentUrl wins over contentId as the fetched URL")
    func contentURLWins() throws {
        var sim = Self.harness()
        sim.launchDMR()
        let outputs = sim.load(contentID: "movie-42", extra: [:])
        #expect(outputs.contains(.mediaNotChecked(url: "movie-42")))
        var with = Self.harness()
        with.launchDMR()
        let media: JSONObject = ["contentId": "movie-42", "contentUrl": .string(Self.loopback), "contentType": "video/mp4",
                                 "streamType": "BUFFERED"]
        let request = try #require(Self.checks(with.media("LOAD", ["media": .object(media)])).first)
        #expect(request.url == Self.loopback)
    }

    @Test("loopback hosts", arguments: [
        ("http://127.0.0.1/a", true), ("http://127.5.6.7:81/a", true), ("http://localhost/a", true), ("http://LOCALHOST:9/a", true),
        ("http://[::1]:8000/a", true), ("http://user@127.0.0.1/a", true), ("http://128.0.0.1/a", false),
        ("http://localhost.example/a", false), ("http://[::2]/a", false), ("https://127.0.0.1/a", false), ("ftp://127.0.0.1/a", false),
    ])
    func loopbackHosts(url: String, checkable: Bool) {
        #expect(MediaURLPolicy.isCheckable(url) == checkable, "\(url)")
    }

    @Test("without a server (checksLoopbackMedia off) a loopback LOAD plays at once")
    func offPlaysAtOnce() {
        var sim = SimHarness()
        sim.launchDMR()
        let outputs = sim.load(contentID: Self.loopback)
        #expect(Self.checks(outputs).isEmpty)
        #expect(SimHarness.mediaStatuses(outputs).contains { $0.requestID != .unsolicited })
    }
}
