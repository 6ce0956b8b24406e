#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in seconds (`CLOCK_MONOTONIC`): what heartbeats, timeouts and the simulator's
/// playback clocks run on. Never jumps with the wall clock.
public enum MonotonicClock {
    public static func seconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
