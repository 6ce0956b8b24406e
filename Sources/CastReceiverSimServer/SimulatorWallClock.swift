import CastCore
import CastReceiverSim
import Glibc

/// The simulator's ground truth on the host's wall clock: monotonic seconds (what the state
/// machines run on) plus one offset to CLOCK_REALTIME, read once when the simulator starts. Every
/// instant the simulator reports (`list`'s `state.playback`, the frame log's `playback` events) is
/// on this one clock, so they compare with each other exactly and with a sender on the same host
/// that reads CLOCK_REALTIME (castline) to within the offset's reading error (a few µs), as long
/// as nobody steps the wall clock meanwhile.
enum SimulatorWallClock {
    /// CLOCK_REALTIME − CLOCK_MONOTONIC in nanoseconds: the realtime reading taken between two
    /// monotonic ones, against their midpoint.
    static let offsetNanoseconds: Int64 = {
        let before = read(CLOCK_MONOTONIC)
        let wall = read(CLOCK_REALTIME)
        let after = read(CLOCK_MONOTONIC)
        return wall - (before + (after - before) / 2)
    }()

    private static func read(_ clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// `monotonic` seconds (``MonotonicClock``) as nanoseconds since the Unix epoch.
    static func unixNanoseconds(monotonic: Double) -> Int64 {
        Int64((monotonic * 1e9).rounded()) + offsetNanoseconds
    }

    /// `truth` with its instants on the wall clock: `started_at_unix_ns` (null when the playhead
    /// has not started for this item and no start is scheduled), `position_s` at `at_unix_ns`,
    /// `rate` (effective, with the clock's drift), `playing`, `media_session_id`, `item_id`,
    /// `content_id`.
    static func json(_ truth: PlaybackTruth) -> JSONObject {
        var object = JSONObject()
        object.append(key: "started_at_unix_ns", value: truth.startedAt.map { .int(unixNanoseconds(monotonic: $0)) } ?? .null)
        object.append(key: "position_s", value: .double(truth.position))
        object.append(key: "at_unix_ns", value: .int(unixNanoseconds(monotonic: truth.at)))
        object.append(key: "rate", value: .double(truth.rate))
        object.append(key: "playing", value: .bool(truth.playing))
        object.append(key: "media_session_id", value: .int(Int64(truth.mediaSessionID)))
        object.append(key: "item_id", value: .int(Int64(truth.itemID)))
        object.append(key: "content_id", value: .string(truth.contentID))
        return object
    }
}
