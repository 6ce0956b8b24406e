/// The numbers a wall runs on. Defaults and why they are what they are: docs/sync.md.
/// Value type; pure.
package struct SyncPolicy: Sendable, Equatable {
    /// Round trips measured per device before a start (sent ``probeSpacing`` apart).
    package var probes = 8
    package var probeSpacing = 0.03
    /// Time added after the slowest device's delay before the start instant: room for the
    /// host's scheduling.
    package var lead = 0.25
    /// Errors within this are left alone: about the filter's own noise (docs/sync.md).
    package var tolerance = 0.004
    /// Errors beyond this are corrected by a seek; below, by a rate nudge.
    package var seekThreshold = 0.5
    /// The largest rate change of a nudge (1 ± this), further bounded by the model's range.
    package var maxNudge = 0.05
    /// A nudge takes at least this long: small errors are corrected gently.
    package var nudgeSeconds = 1.0
    /// Status polls: this often for ``settlingTime`` after a start or a correction, then
    /// ``pollInterval``.
    package var fastPollInterval = 0.12
    package var settlingTime = 4.0
    package var pollInterval = 1.0
    /// Readings needed before a decision.
    package var readingsForDecision = 8
    /// How long a device may take from LOAD to PAUSED before it is given up for this start.
    package var loadTimeout = 30.0
    /// The least weight a start's measurement has in a TV's calibration (``SyncCalibration/learn``).
    package var learningRate = 0.2

    package init() {}

    /// What to do about `error` (seconds, + ahead) on a device whose rates are `rates`.
    package func correction(for error: Double, rates: ClosedRange<Double>) -> Correction {
        guard error.isFinite, abs(error) > tolerance else { return .none }
        let slowest = max(rates.lowerBound, 1 - maxNudge)
        let fastest = min(rates.upperBound, 1 + maxNudge)
        // Ahead: play slower; behind: faster. A model that allows no change gets a seek.
        let limit = error > 0 ? 1 - slowest : fastest - 1
        guard abs(error) <= seekThreshold, limit > 0.0005 else { return .seek }
        let change = min(limit, max(0.002, abs(error) / nudgeSeconds))
        let rate = error > 0 ? 1 - change : 1 + change
        return .nudge(rate: rate, seconds: abs(error) / change)
    }
}

/// One correction of a device against the timeline.
package enum Correction: Sendable, Equatable {
    case none
    /// Play at `rate` for `seconds`, then at 1 again.
    case nudge(rate: Double, seconds: Double)
    /// Seek to where the timeline will be when the device shows the new position.
    case seek
}

/// The start of a wall: one instant on the timeline, and when to send each device its PLAY so
/// that its first frame lands on that instant. Pure.
package enum StartPlan {
    package struct Member: Sendable, Equatable {
        package var id: String
        /// Expected one-way delay of a command (``RoundTripFilter/typical``), seconds.
        package var delay: Double
        /// From the PLAY's arrival to the first frame (calibrated), seconds.
        package var startLatency: Double
        package init(id: String, delay: Double, startLatency: Double) {
            self.id = id
            self.delay = delay
            self.startLatency = startLatency
        }
    }

    /// The start instant (monotonic) for `members` planned at `now`: the slowest device's PLAY
    /// can still go out `lead` from now. And each device's send instant.
    package static func plan(_ members: [Member], now: Double, lead: Double) -> (start: Double, sends: [String: Double]) {
        let slowest = members.map { max(0, $0.delay) + max(0, $0.startLatency) }.max() ?? 0
        let start = now + max(0, lead) + slowest
        var sends: [String: Double] = [:]
        for member in members { sends[member.id] = start - max(0, member.delay) - max(0, member.startLatency) }
        return (start, sends)
    }

    /// Where a device must seek, sent at `now`, so that it shows the timeline: the position the
    /// timeline has when its first frame after the seek appears.
    package static func seekTarget(_ member: Member, timeline: WallTimeline, now: Double) -> Double {
        max(0, timeline.position(at: now + max(0, member.delay) + max(0, member.startLatency)))
    }
}
