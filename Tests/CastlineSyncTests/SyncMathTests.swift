import CastCore
import CastlineSync
import Testing

@Suite struct RoundTripFilterTests {
    @Test func theFloorIsHalfTheSmallestRoundTripAndTypicalHalfTheMedian() {
        var filter = RoundTripFilter(capacity: 4)
        #expect(filter.floor == nil && filter.typical == nil)
        for (sent, trip) in [(0.0, 0.30), (1.0, 0.22), (2.0, 0.26), (3.0, 0.40)] {
            filter.add(.init(sent: sent, received: sent + trip))
        }
        #expect(abs(filter.floor! - 0.11) < 1e-9)
        #expect(abs(filter.typical! - 0.14) < 1e-9)  // median of .22 .26 .30 .40 = .28
        #expect(abs(filter.best!.midpoint - 1.11) < 1e-9)
        #expect(abs(filter.spread! - 0.18) < 1e-9)
    }

    @Test func itKeepsOnlyTheLastSamplesAndRefusesNonsense() {
        var filter = RoundTripFilter(capacity: 2)
        filter.add(.init(sent: 0, received: 0.01))
        filter.add(.init(sent: 1, received: 1.5))
        filter.add(.init(sent: 2, received: 2.6))
        filter.add(.init(sent: 3, received: .infinity))
        filter.add(.init(sent: 4, received: 100))
        #expect(filter.samples.map(\.sent) == [1, 2])
        #expect(abs(filter.floor! - 0.25) < 1e-9)
    }
}

@Suite struct PositionErrorFilterTests {
    @Test func theEstimateAveragesTheLeastDelayedHalf() {
        let timeline = WallTimeline(instant: 100, position: 10)
        var filter = PositionErrorFilter()
        // A device 30 ms ahead. Readings with short round trips see it within ±2 ms; the long ones
        // carry a midpoint 40-50 ms off, and must not count.
        let readings: [(trip: Double, off: Double)] = [(0.02, 0.002), (0.2, 0.05), (0.021, -0.002), (0.3, -0.04), (0.022, 0.001), (0.25, 0.045)]
        for (index, reading) in readings.enumerated() {
            let sent = 101 + Double(index)
            filter.add(.init(sent: sent, received: sent + reading.trip), position: timeline.position(at: sent + reading.trip / 2) + 0.03 + reading.off,
                       timeline: timeline)
            if index < 5 { #expect(filter.estimate(minimum: 6) == nil) }
        }
        let estimate = filter.estimate(minimum: 6)!
        #expect(abs(estimate.error - (0.03 + 0.001 / 3)) < 1e-9)
        #expect(estimate.readings == 3 && abs(estimate.roundTrip - 0.022) < 1e-9)
        filter.reset()
        #expect(filter.estimate(minimum: 1) == nil)
    }

    @Test func theTimelineRunsOneSecondPerSecond() {
        let timeline = WallTimeline(instant: 50, position: 2)
        #expect(timeline.position(at: 53.5) == 5.5)
        #expect(timeline.instant(showing: 5.5) == 53.5)
    }
}

@Suite struct SyncPolicyTests {
    let policy = SyncPolicy()

    @Test func errorsWithinTheToleranceAreLeftAlone() {
        #expect(policy.correction(for: 0.003, rates: 0.5...2) == .none)
        #expect(policy.correction(for: -0.004, rates: 0.5...2) == .none)
        #expect(policy.correction(for: 0.0045, rates: 0.5...2) != .none)
        #expect(policy.correction(for: .nan, rates: 0.5...2) == .none)
    }

    @Test func aSmallErrorIsNudgedAwayInOneSecondAtTheRightSign() {
        // 20 ms ahead: 2 % slower for 1 s; 20 ms behind: 2 % faster.
        guard case .nudge(let slower, let seconds) = policy.correction(for: 0.02, rates: 0.5...2) else { Issue.record("no nudge"); return }
        #expect(abs(slower - 0.98) < 1e-9 && abs(seconds - 1) < 1e-9)
        guard case .nudge(let faster, _) = policy.correction(for: -0.02, rates: 0.5...2) else { Issue.record("no nudge"); return }
        #expect(abs(faster - 1.02) < 1e-9)
        // The correction a nudge makes is exactly the error: (1 − rate) × seconds.
        guard case .nudge(let rate, let time) = policy.correction(for: 0.3, rates: 0.5...2) else { Issue.record("no nudge"); return }
        #expect(abs((1 - rate) * time - 0.3) < 1e-9)
        #expect(abs(1 - rate) <= policy.maxNudge + 1e-12)
    }

    @Test func aLargeErrorOrAModelWithoutRatesGetsASeek() {
        #expect(policy.correction(for: 0.6, rates: 0.5...2) == .seek)
        #expect(policy.correction(for: -2, rates: 0.5...2) == .seek)
        #expect(policy.correction(for: 0.05, rates: 1...1) == .seek)
        // A model that only plays faster can only be nudged when behind.
        guard case .nudge = policy.correction(for: -0.05, rates: 1...2) else { Issue.record("no nudge"); return }
        #expect(policy.correction(for: 0.05, rates: 1...2) == .seek)
    }
}

@Suite struct StartPlanTests {
    @Test func everyFirstFrameLandsOnTheStartInstant() {
        let members = [
            StartPlan.Member(id: "a", delay: 0.3, startLatency: 0.15),
            StartPlan.Member(id: "b", delay: 0.01, startLatency: 0),
            StartPlan.Member(id: "c", delay: 0.12, startLatency: 0.05),
        ]
        let (start, sends) = StartPlan.plan(members, now: 10, lead: 0.25)
        #expect(abs(start - (10 + 0.25 + 0.45)) < 1e-9)
        for member in members {
            #expect(abs(sends[member.id]! + member.delay + member.startLatency - start) < 1e-9)
            #expect(sends[member.id]! >= 10 + 0.25 - 1e-9)
        }
    }

    @Test func aSeekAimsWhereTheWallWillBeAtTheFirstFrame() {
        let timeline = WallTimeline(instant: 0, position: 0)
        let member = StartPlan.Member(id: "a", delay: 0.1, startLatency: 0.2)
        #expect(abs(StartPlan.seekTarget(member, timeline: timeline, now: 30) - 30.3) < 1e-9)
    }
}

@Suite struct SyncCalibrationTests {
    @Test func theFirstMeasurementReplacesTheGuessAndLaterOnesMoveIt() {
        var calibration = SyncCalibration()
        #expect(calibration.startLatency(device: "a", model: "Chromecast") == 0)
        // The mean while few measurements are in, then a moving average of weight 0.25.
        for value in [0.1, 0.2, 0.3] { calibration.learn(device: "a", model: "Chromecast", startLatency: value, weight: 0.25) }
        #expect(abs(calibration.startLatency(device: "a", model: "Chromecast") - 0.2) < 1e-9)
        for value in [0.4, 0.4] { calibration.learn(device: "a", model: "Chromecast", startLatency: value, weight: 0.25) }
        #expect(abs(calibration.startLatency(device: "a", model: "Chromecast") - (0.25 + 0.25 * 0.15)) < 1e-9)
        calibration.learn(device: "b", model: "Chromecast", startLatency: 0.05, weight: 0.5)
        calibration.learn(device: "c", model: "Chromecast", startLatency: 0.07, weight: 0.5)
        // A device never measured gets its model's median (of 0.05, 0.07 and a's).
        #expect(abs(calibration.startLatency(device: "new", model: "Chromecast") - 0.07) < 1e-9)
        #expect(calibration.startLatency(device: "new", model: "Nest Hub") == 0)
    }

    @Test func itSurvivesItsFileAndSkipsNonsense() throws {
        var calibration = SyncCalibration()
        calibration.learn(device: "a", model: "Chromecast", startLatency: 0.1234, weight: 1)
        let read = SyncCalibration(json: try JSONValue.parse(calibration.json.serialized()))
        #expect(abs(read.startLatency(device: "a", model: "x") - 0.1234) < 1e-4)
        let bad = SyncCalibration(json: try JSONValue.parse(#"{"devices": {"a": {"model": "m", "start_latency_ms": -5}, "b": {"start_latency_ms": 3}}}"#))
        #expect(bad.devices.isEmpty)
    }
}
