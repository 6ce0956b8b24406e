import CastCore
import CastProtocol
import CastReceiverSim
import Glibc
import Testing

@testable import CastReceiverSimServer

/// Issue 45's server half without sockets: the latency delay line's order and jitter bounds,
/// the config keys, the control commands' checks and the wall clock's conversion.
@Suite("Simulator: latency, sync config and ground truth")
struct SimulatorSyncTests {
    @Test func delayLineKeepsOrderAndJitterBounds() {
        let latency = JitteredDelay(base: 0.05, jitter: 0.02)
        var random = IdentifierGenerator(seed: 45)
        var line = MessageDelayLine<Int>()
        var dues: [Double] = []
        var drawn: [Double] = []
        // 1,000 messages 1 ms apart: delays vary by more than the gap, so some are held back.
        for index in 0..<1000 {
            let now = 100 + Double(index) * 0.001
            let delay = latency.draw(&random)
            drawn.append(delay)
            let due = line.append(index, now: now, delay: delay)
            #expect(due >= now + delay, "never before its own delay")
            #expect(due == now + delay || due == dues.last, "later only when held behind the one before")
            dues.append(due)
        }
        #expect(drawn.allSatisfy { (0.05..<0.07).contains($0) })
        #expect(drawn.min()! < 0.052 && drawn.max()! > 0.068, "the whole jitter range is used")
        #expect(dues == dues.sorted())
        #expect(dues.enumerated().contains { $0.offset > 0 && $0.element == dues[$0.offset - 1] }, "some were held back")
        // Taken in order, each at its due time, nothing early.
        var taken: [Int] = []
        var clock = 100.0
        var wakes = 0
        while let next = line.nextDue, wakes < 10_000 {
            wakes += 1
            clock = max(clock, next)
            let batch = line.takeDue(by: clock)
            #expect(!batch.isEmpty)
            #expect(batch.allSatisfy { dues[$0] <= clock })
            taken += batch
        }
        #expect(taken == Array(0..<1000))
        #expect(line.isEmpty && line.nextDue == nil)
        #expect(line.takeDue(by: 1e9).isEmpty)
    }

    @Test func zeroLatencyDrawsNothingAndDelaysNothing() {
        var random = IdentifierGenerator(seed: 1)
        let untouched = random
        #expect(JitteredDelay.zero.draw(&random) == 0 && JitteredDelay.zero.isZero)
        var copy = untouched
        #expect(random.next() == copy.next(), "no draw without jitter")
        var line = MessageDelayLine<String>()
        line.append("a", now: 5, delay: 0)
        #expect(line.takeDue(by: 5) == ["a"])
    }

    @Test func delaysInMillisecondsAreChecked() throws {
        #expect(try JitteredDelay.milliseconds(base: 100, jitter: 20).get() == JitteredDelay(base: 0.1, jitter: 0.02))
        for (base, jitter) in [(-1.0, 0.0), (0, 10_001), (.nan, 0), (.infinity, 0)] {
            guard case .failure(let error) = JitteredDelay.milliseconds(base: base, jitter: jitter) else {
                Issue.record("\(base)/\(jitter) accepted")
                continue
            }
            #expect(error.message.contains("0…10000"))
        }
        let bad: JSONValue = ["command": "latency", "base_ms": "fast"]
        guard case .failure(let error) = SimulatorControl.delay(bad, "latency") else {
            Issue.record("a string accepted")
            return
        }
        #expect(error.message == "latency: base_ms must be a number of milliseconds in 0…10000, found \"fast\"")
        #expect(
            try SimulatorControl.delay(["command": "first-frame", "base_ms": 150], "first-frame").get()
                == JitteredDelay(base: 0.15, jitter: 0))
    }

    @Test func configKeys() throws {
        let text = """
            {"devices": [{"name": "Wall 1", "uuid": "00112233445566778899aabbccddeeff",
                          "latency": {"base_ms": 50, "jitter_ms": 20}, "first_frame": {"jitter_ms": 150},
                          "clock_drift_ppm": -200, "playback_rates": {"min": 0.75, "max": 1.5}},
                         {"name": "Wall 2", "uuid": "00112233445566778899aabbccddeef0", "address": "127.0.0.2"}]}
            """
        let file = try SimulatorConfigFile.parse(text: text, file: "t.json")
        let wall = file.devices[0]
        #expect(wall.latency == JitteredDelay(base: 0.05, jitter: 0.02))
        #expect(wall.firstFrame == JitteredDelay(base: 0, jitter: 0.15))
        #expect(wall.clockDriftPPM == -200 && wall.playbackRates == 0.75...1.5)
        #expect(wall.profile.playbackRates == 0.75...1.5 && wall.profile.firstFrame == wall.firstFrame)
        let plain = file.devices[1]
        #expect(plain.latency.isZero && plain.firstFrame.isZero && plain.clockDriftPPM == 0 && plain.playbackRates == 0.5...2)

        let mistakes: [(String, String)] = [
            (#""latency": {"base_ms": -5}"#, "devices[0].latency: base_ms must be a number of milliseconds in 0…10000, found -5.0"),
            (#""first_frame": {"base_ms": 20000}"#, "base_ms must be a number of milliseconds in 0…10000"),
            (#""latency": {"base": 5}"#, "unknown key \"base\" in devices[0].latency"),
            (#""clock_drift_ppm": 20000"#, "expected parts per million in -10000…10000"),
            (#""playback_rates": {"min": 2, "max": 1}"#, "min 2.0 is above max 1.0"),
            (#""playback_rates": {"max": 32}"#, "expected a rate in 0.0625…16.0"),
        ]
        for (key, message) in mistakes {
            let bad = "{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \(key)}]}"
            #expect(throws: SimulatorError.self) { _ = try SimulatorConfigFile.parse(text: bad, file: "t.json") }
            do {
                _ = try SimulatorConfigFile.parse(text: bad, file: "t.json")
            } catch {
                #expect("\(error)".contains(message), "\(key): \(error)")
            }
        }
    }

    @Test func truthOnTheWallClock() {
        let truth = PlaybackTruth(
            mediaSessionID: 3, itemID: 7, contentID: "http://h/a.mp4", playing: true, startedAt: 10.5,
            position: 1.25, at: 11.75, rate: 1.0002)
        let json = JSONValue.object(SimulatorWallClock.json(truth))
        let offset = SimulatorWallClock.offsetNanoseconds
        #expect(json["started_at_unix_ns"]?.int == 10_500_000_000 + offset)
        #expect(json["at_unix_ns"]?.int == 11_750_000_000 + offset)
        #expect(json["position_s"]?.double == 1.25 && json["rate"]?.double == 1.0002 && json["playing"]?.bool == true)
        #expect(json["media_session_id"]?.int == 3 && json["item_id"]?.int == 7 && json["content_id"]?.string == "http://h/a.mp4")
        var waiting = truth
        waiting.startedAt = nil
        #expect(JSONValue.object(SimulatorWallClock.json(waiting))["started_at_unix_ns"] == .null)
        // The offset matches the host's CLOCK_REALTIME now (to well within a second).
        let now = SimulatorWallClock.unixNanoseconds(monotonic: MonotonicClock.seconds())
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let wall = Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
        #expect(abs(wall - now) < 100_000_000)
    }
}
