import CastBackoff
import Testing

/// ``Backoff``: the one formula, with each caller's numbers as a row, and the clamping.
@Suite struct BackoffTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let who: String
        let backoff: Backoff
        let attempt: Int
        let unit: Double
        let delay: Double
        var testDescription: String { "\(who) attempt \(attempt) unit \(unit)" }
    }

    /// A session's reconnect (ReconnectPolicy's defaults), a job's failed cast (`retry_delay` 10 s,
    /// doubling to 16×), an isolated plugin's restart (0.5 s doubling to 30 s) and the MQTT
    /// bridge's broker connect (0.25 s doubling to 1.5 s, upper half).
    static let rows: [Row] = [
        Row(who: "session", backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.8, jitter: 0.5), attempt: 1, unit: 0, delay: 0.05),
        Row(who: "session", backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.8, jitter: 0.5), attempt: 3, unit: 0, delay: 0.2),
        Row(who: "session", backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.8, jitter: 0.5), attempt: 5, unit: 0, delay: 0.8),
        Row(who: "session", backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.8, jitter: 0.5), attempt: 9, unit: 0.5, delay: 0.6),
        Row(who: "session", backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 0.8, jitter: 0.5), attempt: 9, unit: 1, delay: 0.4),
        Row(who: "job", backoff: Backoff(initial: 10, maximum: 160), attempt: 0, unit: 0, delay: 10),
        Row(who: "job", backoff: Backoff(initial: 10, maximum: 160), attempt: 1, unit: 0.9, delay: 10),
        Row(who: "job", backoff: Backoff(initial: 10, maximum: 160), attempt: 2, unit: 0, delay: 20),
        Row(who: "job", backoff: Backoff(initial: 10, maximum: 160), attempt: 5, unit: 0, delay: 160),
        Row(who: "job", backoff: Backoff(initial: 10, maximum: 160), attempt: 50, unit: 0, delay: 160),
        Row(who: "plugin", backoff: Backoff(initial: 0.5, maximum: 30), attempt: 1, unit: 0, delay: 0.5),
        Row(who: "plugin", backoff: Backoff(initial: 0.5, maximum: 30), attempt: 6, unit: 0, delay: 16),
        Row(who: "plugin", backoff: Backoff(initial: 0.5, maximum: 30), attempt: 7, unit: 0, delay: 30),
        Row(who: "plugin", backoff: Backoff(initial: 0.5, maximum: 30), attempt: Int.max, unit: 0, delay: 30),
        Row(who: "mqtt", backoff: Backoff(initial: 0.25, maximum: 1.5, jitter: 0.5), attempt: 1, unit: 1, delay: 0.125),
        Row(who: "mqtt", backoff: Backoff(initial: 0.25, maximum: 1.5, jitter: 0.5), attempt: 3, unit: 0, delay: 1),
        Row(who: "mqtt", backoff: Backoff(initial: 0.25, maximum: 1.5, jitter: 0.5), attempt: 4, unit: 0.5, delay: 1.125),
        Row(who: "mqtt", backoff: Backoff(initial: 0.25, maximum: 1.5, jitter: 0.5), attempt: 4, unit: 1, delay: 0.75),
    ]

    @Test(arguments: rows)
    func delays(_ row: Row) {
        // Within rounding: 0.8 × 0.75 is 0.6000000000000001 in binary.
        #expect(abs(row.backoff.delay(attempt: row.attempt, unit: row.unit) - row.delay) < 1e-12)
    }

    @Test func jitterOnlyShortensAndNeverPassesTheCap() {
        let backoff = Backoff(initial: 0.1, multiplier: 3, maximum: 2, jitter: 0.4)
        for attempt in 1...40 {
            let full = backoff.delay(attempt: attempt, unit: 0)
            for step in 0..<10 {
                let delay = backoff.delay(attempt: attempt, unit: Double(step) / 10)
                #expect(delay <= full && delay >= full * 0.6 && delay <= 2)
            }
        }
        #expect(Backoff(initial: 1, maximum: 8).delay(attempt: 3, unit: 0.99) == 4, "no jitter: the unit does not matter")
    }

    @Test func outOfRangeSettingsAreClamped() {
        let broken = Backoff(initial: .nan, multiplier: .infinity, maximum: -5, jitter: 7)
        #expect(broken.delay(attempt: 3, unit: .nan) == 0)
        let huge = Backoff(initial: .greatestFiniteMagnitude, multiplier: 16, maximum: .infinity, jitter: -1)
        #expect(huge.delay(attempt: 70, unit: 0.5) == .greatestFiniteMagnitude)
        #expect(Backoff(initial: 5, maximum: 1).delay(attempt: 1) == 1, "the initial delay is capped too")
        #expect(Backoff(initial: 1, multiplier: 0.5, maximum: 10).delay(attempt: 4) == 1, "growth is at least 1")
        #expect(Backoff(initial: 1, maximum: 10, jitter: 1).delay(attempt: 2, unit: 2) == 0, "a unit above 1 counts as 1")
    }
}
