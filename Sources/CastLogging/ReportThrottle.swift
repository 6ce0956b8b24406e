/// A repeated problem reported once per ``interval`` at most, each report carrying how many
/// occurrences were not reported since the last: a flood of the same warning is one line a
/// minute, never a log that rotates everything else away. Pure: time is a parameter (seconds,
/// any monotonic origin). Keep one per source of the problem (a listener, a device, a plugin).
package struct ReportThrottle: Sendable {
    package let interval: Double
    private var lastReport: Double?
    private var unreported = 0

    package init(interval: Double = 60) { self.interval = interval }

    /// An occurrence at `now`: nil when it is not to be reported, else the number of occurrences
    /// not reported since the last report (report it now, with that count).
    package mutating func occurrence(now: Double) -> Int? {
        if let lastReport, now - lastReport < interval {
            unreported += 1
            return nil
        }
        defer { unreported = 0 }
        lastReport = now
        return unreported
    }
}
