/// Bad input is logged at most once per ``interval`` per source (a topic, a device): a client that
/// floods malformed commands gets an error result each time but one log line a minute, with the
/// number suppressed since the last. Pure: time is a parameter.
package struct ProblemLimiter {
    package let interval: Double
    private var last: [String: (time: Double, suppressed: Int)] = [:]

    package init(interval: Double = 60) { self.interval = interval }

    /// Nil: stay quiet. Otherwise log now; the value is how many were suppressed before.
    package mutating func shouldLog(source: String, now: Double) -> Int? {
        if let entry = last[source], now - entry.time < interval {
            last[source] = (entry.time, entry.suppressed + 1)
            return nil
        }
        let suppressed = last[source]?.suppressed ?? 0
        if last.count > 4_096 { last = last.filter { now - $0.value.time < interval } }
        last[source] = (now, 0)
        return suppressed
    }
}
