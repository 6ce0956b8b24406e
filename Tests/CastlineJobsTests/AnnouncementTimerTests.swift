import CastlineConfig
@testable import CastlineJobs
import Testing

/// The announce job's `at:` timer, on a clock the test turns.
@Suite struct AnnouncementTimerTests {
    /// 2026-03-27 12:00:00 UTC, a Friday.
    static let friday: Int64 = 1_774_612_800
    /// 12:00:10 and 12:00:20 UTC, every day.
    static let times = Schedule(entries: [.init(days: Set(0..<7), from: 12 * 3600 + 10, to: 12 * 3600 + 11),
                                          .init(days: Set(0..<7), from: 12 * 3600 + 20, to: 12 * 3600 + 21)], zone: .utc)

    @Test func firesAtEachTimeOnceAndNotBefore() {
        var timer = AnnouncementTimer(times: Self.times, now: Self.friday)
        var fired: [Int64] = []
        for now in Self.friday...(Self.friday + 30) {
            switch timer.check(now: now) {
            case .fire(let due): fired.append(now); #expect(due == now)
            case .missed: Issue.record("nothing is late on a clock that ticks every second")
            case .wait: break
            }
        }
        #expect(fired == [Self.friday + 10, Self.friday + 20])
        #expect(timer.next == Self.friday + 86_400 + 10, "tomorrow's first")
    }

    @Test func aTimeEqualToTheStartFires() {
        var timer = AnnouncementTimer(times: Self.times, now: Self.friday + 10)
        #expect(timer.check(now: Self.friday + 10) == .fire(due: Self.friday + 10))
    }

    @Test func aTickThatComesLateStillFiresWithinTheLatenessButNotAfter() {
        var timer = AnnouncementTimer(times: Self.times, now: Self.friday)
        // A busy second: the tick comes 3 s late, and fires once for the 12:00:10 time.
        #expect(timer.check(now: Self.friday + 13) == .fire(due: Self.friday + 10))
        #expect(timer.check(now: Self.friday + 14) == .wait)
        // The clock jumps an hour ahead (a suspend): 12:00:20 is missed, not played an hour late.
        let later = Self.friday + 3600
        #expect(timer.check(now: later) == .missed(due: Self.friday + 20, late: 3580))
        #expect(timer.check(now: later + 1) == .wait)
        #expect(timer.next == Self.friday + 86_400 + 10)
    }
}
