@testable import CastLogging
import Testing

@Suite struct ReportThrottleTests {
    @Test("the first occurrence is reported, then one a minute with the count of those not reported")
    func throttle() {
        var throttle = ReportThrottle(interval: 60)
        #expect(throttle.occurrence(now: 100) == 0)
        for t in stride(from: 101.0, to: 160, by: 1) { #expect(throttle.occurrence(now: t) == nil) }
        #expect(throttle.occurrence(now: 160) == 59)
        #expect(throttle.occurrence(now: 161) == nil)
        #expect(throttle.occurrence(now: 500) == 1)
    }
}
