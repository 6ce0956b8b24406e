import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

/// A receiver takes the duration from the media itself; the sender's `media.duration` is a hint
/// (issue 47: a 20 s local clip without a media rule was still playing at 150 s).
@Suite("Receiver simulator: the media decides the duration")
struct MediaDurationTests {
    @Test("the duration: the media's, else the rule's, else the sender's hint")
    func theMediaDecidesTheDuration() throws {
        func finish(probed: Double?, rule: Double?, hint: Double?) throws -> (reported: Double?, finishedAfter: Double?) {
            var sim = SimHarness(rules: rule.map { [MediaRule(duration: $0)] } ?? [],
                                 timing: PlaybackTiming(bufferingDelay: 0.25, checksLoopbackMedia: true))
            sim.launchDMR()
            let outputs = sim.load(contentID: "http://127.0.0.1:8099/clip.mp4", duration: hint)
            let request = try #require(MediaCheckTests.checks(outputs).first)
            let reply = sim.device.mediaChecked(mediaSessionID: request.mediaSessionID, failure: nil, reason: "ok", duration: probed,
                                                now: sim.now)
            let reported = SimHarness.mediaStatuses(reply).first?.status.first?.media?.duration
            let start = sim.now
            var steps = 0
            while let deadline = sim.device.nextDeadline, steps < 5 {
                steps += 1
                let out = sim.advance(by: deadline - sim.now)
                if SimHarness.mediaStatuses(out).contains(where: { $0.status.first?.idleReason == .finished }) {
                    return (reported, sim.now - start - 0.25)
                }
            }
            return (reported, nil)
        }
        let local = try finish(probed: 20, rule: nil, hint: 150)
        #expect(local.reported == 20 && local.finishedAfter == 20, "a 20 s clip ends at 20 s whatever the sender said")
        #expect(try finish(probed: nil, rule: 30, hint: 150).finishedAfter == 30)
        #expect(try finish(probed: nil, rule: nil, hint: 150).finishedAfter == 150)
        #expect(try finish(probed: nil, rule: nil, hint: nil).finishedAfter == nil)
    }
}
