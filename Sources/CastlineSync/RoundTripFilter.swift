/// How far a device is, one way, measured the way NTP measures it: from round trips on the warm
/// session (a media GET_STATUS each), keeping the last ``capacity``.
///
/// The round trip with the smallest delay is the one least disturbed by queueing (NTP's clock
/// filter, RFC 5905 §10): half of it is the ``floor`` of the one-way delay, and the moment a
/// reply with that delay was made is known best. Half of the median round trip is the ``typical``
/// one-way delay: what a command sent now is expected to take, jitter included. Value type; pure.
package struct RoundTripFilter: Sendable, Equatable {
    /// One round trip: sent and answered at these monotonic seconds.
    package struct Sample: Sendable, Equatable {
        package var sent: Double
        package var received: Double
        package var roundTrip: Double { received - sent }
        /// The midpoint: when the device most likely made its answer.
        package var midpoint: Double { (sent + received) / 2 }
        package init(sent: Double, received: Double) {
            self.sent = sent
            self.received = max(sent, received)
        }
    }

    package let capacity: Int
    package private(set) var samples: [Sample] = []

    package init(capacity: Int = 8) { self.capacity = max(1, capacity) }

    package mutating func add(_ sample: Sample) {
        guard sample.roundTrip.isFinite, sample.roundTrip >= 0, sample.roundTrip < 60 else { return }
        samples.append(sample)
        if samples.count > capacity { samples.removeFirst(samples.count - capacity) }
    }

    /// The sample with the smallest round trip (nil before the first).
    package var best: Sample? { samples.min { $0.roundTrip < $1.roundTrip } }

    /// Half the smallest round trip: the one-way delay without queueing.
    package var floor: Double? { best.map { $0.roundTrip / 2 } }

    /// Half the median round trip: the one-way delay a command can expect, jitter included.
    package var typical: Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.map(\.roundTrip).sorted()
        let middle = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return median / 2
    }

    /// The spread of the round trips kept (largest − smallest): how much a single one may lie.
    package var spread: Double? {
        guard let low = samples.map(\.roundTrip).min(), let high = samples.map(\.roundTrip).max() else { return nil }
        return high - low
    }
}
