import CastCore
import CastProtocol
import Testing

@testable import CastReceiverSim

/// Issue 45's device side on the pure state machine, with a hand-moved clock: the first frame,
/// clock drift, the model's playback rates and the ground truth. Clock values are sums of
/// powers of two, so positions compare exactly where no drift is involved.
@Suite("Receiver simulator: synchronised playback")
struct PlaybackSyncTests {
    /// LOAD of a `duration` s clip and buffering over (0.25 s): the harness at the end of buffering.
    static func playing(_ sim: inout SimHarness, duration: Double = 600, extra: JSONObject = [:]) {
        sim.launchDMR()
        sim.load(duration: duration, extra: extra)
        sim.advance(by: 0.25)
    }

    @Test func firstFrameHoldsCurrentTimeThenAdvances() throws {
        var sim = SimHarness(firstFrame: JitteredDelay(base: 0.5, jitter: 0))
        sim.launchDMR()
        sim.load()
        let loaded = sim.now
        let playing = SimHarness.mediaStatuses(sim.advance(by: 0.25))
        // PLAYING is reported when buffering ends, as real devices do; the playhead waits.
        #expect(playing.first?.status.first?.playerState == .playing && playing.first?.status.first?.currentTime == 0)
        #expect(sim.snapshot.playback?.startedAt == loaded + 0.75)
        sim.advance(by: 0.25)
        #expect(sim.mediaStatus()?.currentTime == 0)
        sim.advance(by: 0.5)  // 0.25 s past the first frame
        #expect(sim.mediaStatus()?.currentTime == 0.25)

        // PAUSE, then PLAY: PLAYING at once, the position held for another first frame.
        sim.media("PAUSE", ["mediaSessionId": 1])
        sim.advance(by: 1)
        let resumed = try #require(SimHarness.mediaStatuses(sim.media("PLAY", ["mediaSessionId": 1])).first?.status.first)
        #expect(resumed.playerState == .playing && resumed.currentTime == 0.25)
        let resumedAt = sim.now
        sim.advance(by: 0.5)
        #expect(sim.mediaStatus()?.currentTime == 0.25)
        sim.advance(by: 0.5)
        #expect(sim.mediaStatus()?.currentTime == 0.75)
        #expect(sim.snapshot.playback?.startedAt == resumedAt + 0.5)

        // SEEK while playing: the playhead jumps, then waits for its first frame again.
        sim.media("SEEK", ["mediaSessionId": 1, "currentTime": 30])
        let seekedAt = sim.now
        sim.advance(by: 0.25)
        #expect(sim.mediaStatus()?.currentTime == 30)
        sim.advance(by: 1)
        #expect(sim.mediaStatus()?.currentTime == 30.75)
        #expect(sim.snapshot.playback?.startedAt == seekedAt + 0.5)
    }

    @Test func pauseBeforeTheFirstFrameMeansItNeverStarted() {
        var sim = SimHarness(firstFrame: JitteredDelay(base: 1, jitter: 0))
        Self.playing(&sim)
        let firstStart = sim.now + 1
        sim.advance(by: 2)
        sim.media("PAUSE", ["mediaSessionId": 1])
        sim.media("PLAY", ["mediaSessionId": 1])
        sim.advance(by: 0.5)
        sim.media("PAUSE", ["mediaSessionId": 1])  // before the new first frame
        let truth = sim.snapshot.playback
        #expect(truth?.startedAt == firstStart && truth?.playing == false && truth?.position == 1)
        sim.advance(by: 10)
        #expect(sim.mediaStatus()?.currentTime == 1)
    }

    @Test func firstFrameJitterStaysInItsBoundsAndRepeatsWithTheSeed() {
        func delays(seed: UInt64) -> [Double] {
            var sim = SimHarness(seed: seed, firstFrame: JitteredDelay(base: 0.1, jitter: 0.2))
            Self.playing(&sim)
            var seen: [Double] = []
            for _ in 0..<50 {
                sim.media("PAUSE", ["mediaSessionId": 1])
                sim.advance(by: 1)
                sim.media("PLAY", ["mediaSessionId": 1])
                if let started = sim.snapshot.playback?.startedAt { seen.append(started - sim.now) }
                sim.advance(by: 1)
            }
            return seen
        }
        let first = delays(seed: 7)
        #expect(first.count == 50)
        #expect(first.allSatisfy { $0 >= 0.1 - 1e-9 && $0 < 0.3 + 1e-9 })
        #expect(Set(first.map { ($0 * 1000).rounded() }).count > 10)  // drawn per start, not once
        #expect(delays(seed: 7) == first)
        #expect(delays(seed: 8) != first)
    }

    @Test func driftChangesPositionOverThousandSecondsByPTimesAMillisecond() throws {
        for ppm in [250.0, -400, 10_000] {
            var sim = SimHarness(clockDriftPPM: ppm)
            Self.playing(&sim, duration: 5000)
            sim.advance(by: 1000)
            let reported = sim.mediaStatus()
            let status = try #require(reported)
            // The device reports its true position, and playbackRate 1: it cannot see its drift.
            #expect(abs(status.currentTime - (1000 + ppm * 1e-3)) < 1e-9, "ppm \(ppm): \(status.currentTime)")
            #expect(status.playbackRate == 1)
            #expect(sim.snapshot.playback?.rate == 1 + ppm * 1e-6)
        }
    }

    @Test func driftSetAtRunTimeKeepsThePositionSoFar() throws {
        var sim = SimHarness()
        Self.playing(&sim, duration: 5000)
        sim.advance(by: 100)
        _ = sim.device.setClockDrift(ppm: 1000, now: sim.now)
        sim.advance(by: 1000)
        let reported = sim.mediaStatus()
        #expect(abs(try #require(reported).currentTime - 1101) < 1e-9)
        _ = sim.device.setClockDrift(ppm: 1e9, now: sim.now)  // clamped to ±10,000 ppm
        #expect(sim.snapshot.playback?.rate == 1.01)
    }

    @Test func finishTimeUsesTheDriftingRate() throws {
        var sim = SimHarness(clockDriftPPM: 10_000)  // 1 % fast
        sim.launchDMR()
        sim.load(duration: 101)
        let start = sim.now + 0.25
        sim.advance(by: 0.25)
        let deadline = try #require(sim.device.nextDeadline)
        #expect(abs(deadline - (start + 100)) < 1e-9)  // 101 media seconds at 1.01 per second
        #expect(sim.advance(by: 99.9).isEmpty)
        let end = SimHarness.mediaStatuses(sim.advance(by: 0.2))
        #expect(end.first?.status.first?.idleReason == .finished && end.first?.status.first?.currentTime == 101)
    }

    @Test func finishTimeWaitsForTheFirstFrame() throws {
        var sim = SimHarness(firstFrame: JitteredDelay(base: 2, jitter: 0))
        sim.launchDMR()
        sim.load(duration: 10)
        let start = sim.now + 0.25
        sim.advance(by: 0.25)
        #expect(sim.device.nextDeadline == start + 12)
    }

    @Test func playbackRatesComeFromTheModel() throws {
        var narrow = SimHarness(playbackRates: 0.75...1.5)
        Self.playing(&narrow)
        let accepted = try #require(SimHarness.mediaStatuses(narrow.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": 1.5])).first)
        #expect(accepted.status.first?.playbackRate == 1.5)
        for rate in [1.625, 0.5, 2] {
            let refused = SimHarness.sent(narrow.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": .double(rate)]))
            #expect(refused.first?.json["type"] == "INVALID_REQUEST" && refused.first?.json["reason"] == "INVALID_PARAMS", "rate \(rate)")
        }

        // The default model: 0.5…2 (pychromecast PR#660).
        var standard = SimHarness()
        Self.playing(&standard)
        for (rate, ok) in [(0.5, true), (2.0, true), (0.25, false), (2.5, false), (4, false)] {
            let reply = SimHarness.sent(standard.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": .double(rate)]))
            #expect((reply.first?.json["type"] == "MEDIA_STATUS") == ok, "rate \(rate)")
        }

        // LOAD's playbackRate: in range it plays at it; outside it is ignored (plays at 1).
        var loaded = SimHarness(playbackRates: 0.75...1.5)
        Self.playing(&loaded, extra: ["playbackRate": 1.25])
        #expect(loaded.mediaStatus()?.playbackRate == 1.25)
        var outside = SimHarness(playbackRates: 0.75...1.5)
        Self.playing(&outside, extra: ["playbackRate": 2])
        #expect(outside.mediaStatus()?.playbackRate == 1)
    }

    @Test func rateChangesAtOnceAndSmoothly() throws {
        var sim = SimHarness(firstFrame: JitteredDelay(base: 0.5, jitter: 0))
        Self.playing(&sim)
        sim.advance(by: 10.5)
        #expect(sim.mediaStatus()?.currentTime == 10)
        let startedAt = sim.snapshot.playback?.startedAt
        sim.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": 1.5])
        // No first frame for a rate change: the playhead goes on from where it is.
        #expect(sim.snapshot.playback?.startedAt == startedAt)
        sim.advance(by: 2)
        #expect(sim.mediaStatus()?.currentTime == 13)
    }

    @Test func truthFieldsAndEvents() throws {
        var sim = SimHarness(firstFrame: JitteredDelay(base: 0.5, jitter: 0), clockDriftPPM: 0)
        #expect(sim.snapshot.playback == nil)
        sim.launchDMR()
        sim.load(contentID: "http://example.com/wall.mp4")
        let loadedAt = sim.now
        let buffering = try #require(sim.snapshot.playback)
        #expect(buffering.mediaSessionID == 1 && buffering.contentID == "http://example.com/wall.mp4")
        #expect(!buffering.playing && buffering.startedAt == nil && buffering.position == 0 && buffering.at == loadedAt)
        sim.advance(by: 0.25)
        sim.advance(by: 1.5)  // 1 s past the first frame
        let truth = try #require(sim.snapshot.playback)
        #expect(
            truth
                == PlaybackTruth(
                    mediaSessionID: 1, itemID: buffering.itemID, contentID: "http://example.com/wall.mp4",
                    playing: true, startedAt: loadedAt + 0.75, position: 1, at: sim.now, rate: 1))
        #expect(truth.position(at: sim.now + 2) == 3)

        sim.media("PAUSE", ["mediaSessionId": 1])
        sim.media("SEEK", ["mediaSessionId": 1, "currentTime": 20, "resumeState": "PLAYBACK_START"])
        sim.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": 2])
        _ = sim.device.setClockDrift(ppm: 500, now: sim.now)
        sim.media("STOP", ["mediaSessionId": 1])
        let events = sim.device.takePlaybackEvents()
        #expect(events.map(\.change) == [.item, .start, .stop, .seek, .rate, .rate, .end])
        #expect(events[1].truth.startedAt == loadedAt + 0.75 && events[1].truth.at == loadedAt + 0.25)
        #expect(events[3].truth.position == 20 && events[3].truth.startedAt == sim.now + 0.5)
        #expect(events[5].truth.rate == 2 * (1 + 500e-6))
        #expect(!events[6].truth.playing && events[6].truth.position == 20)
        #expect(sim.device.takePlaybackEvents().isEmpty)
    }
}
