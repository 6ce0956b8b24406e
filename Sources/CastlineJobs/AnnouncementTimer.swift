import CastlineConfig

/// When an announce job's `at:` times fire. Pure: asked about once a second with the wall-clock
/// time (Unix seconds), so tests drive it on any clock.
package struct AnnouncementTimer: Sendable, Equatable {
    package enum Decision: Sendable, Equatable {
        case wait
        /// The time `due` has come: play the announcement now.
        case fire(due: Int64)
        /// The time `due` passed more than ``lateness`` seconds ago (the daemon was stopped or
        /// suspended, or the clock jumped forward): it is not played late.
        case missed(due: Int64, late: Int64)
    }

    /// Seconds after its time that an announcement still plays.
    package static let lateness: Int64 = 60

    let times: Schedule
    /// The next time to fire (nil: the schedule names no day).
    package private(set) var next: Int64?

    /// Starting at `now`: a time equal to `now` still fires.
    package init(times: Schedule, now: Int64) {
        self.times = times
        next = times.nextStart(after: now - 1)
    }

    package mutating func check(now: Int64) -> Decision {
        guard let due = next, now >= due else { return .wait }
        next = times.nextStart(after: now)
        return now - due > Self.lateness ? .missed(due: due, late: now - due) : .fire(due: due)
    }
}
