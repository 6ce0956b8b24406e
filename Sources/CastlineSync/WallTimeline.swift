/// Where the wall's media should be at any instant: position ``position`` at monotonic instant
/// ``instant``, advancing one second per second. Every TV of a wall is held to one timeline.
/// Value type; pure.
package struct WallTimeline: Sendable, Equatable {
    /// Monotonic seconds.
    package var instant: Double
    /// Seconds into the media at ``instant``.
    package var position: Double

    package init(instant: Double, position: Double) {
        self.instant = instant
        self.position = position
    }

    /// The position the wall shows at `time`.
    package func position(at time: Double) -> Double { position + (time - instant) }

    /// The instant the wall shows `target` (inverse of ``position(at:)``).
    package func instant(showing target: Double) -> Double { instant + (target - position) }
}

/// One device's error against the timeline, filtered: each round trip gives the device's
/// position at the reply's midpoint; the estimate is the mean error of the least-delayed half of
/// the readings since the last correction (a correction makes the earlier ones stale). The
/// least-delayed readings carry the smallest queueing; averaging several of them cancels the
/// jitter that remains (with 20 ms of jitter each way, 8 readings give ±4 ms at p95, against
/// ±5.5 ms for the least-delayed one alone: docs/sync.md). Value type; pure.
package struct PositionErrorFilter: Sendable, Equatable {
    package struct Reading: Sendable, Equatable {
        package var sample: RoundTripFilter.Sample
        /// Device position − timeline position at the sample's midpoint (+: ahead), seconds.
        package var error: Double
    }

    package struct Estimate: Sendable, Equatable {
        /// Seconds, + ahead.
        package var error: Double
        /// The largest round trip among the readings averaged.
        package var roundTrip: Double
        package var readings: Int
    }

    package let capacity: Int
    package private(set) var readings: [Reading] = []

    package init(capacity: Int = 8) { self.capacity = max(1, capacity) }

    /// A status with `position`, got by the round trip `sample`, held against `timeline`.
    package mutating func add(_ sample: RoundTripFilter.Sample, position: Double, timeline: WallTimeline) {
        let error = position - timeline.position(at: sample.midpoint)
        guard error.isFinite else { return }
        readings.append(Reading(sample: sample, error: error))
        if readings.count > capacity { readings.removeFirst(readings.count - capacity) }
    }

    /// Forget the readings (after a seek, a rate nudge, a new item).
    package mutating func reset() { readings = [] }

    /// The estimate once `minimum` readings are in.
    package func estimate(minimum: Int = 6) -> Estimate? {
        guard readings.count >= max(1, minimum) else { return nil }
        let best = readings.sorted { $0.sample.roundTrip < $1.sample.roundTrip }.prefix(max(1, readings.count / 2))
        let error = best.map(\.error).reduce(0, +) / Double(best.count)
        return Estimate(error: error, roundTrip: best.last!.sample.roundTrip, readings: best.count)
    }
}
