import CastLogging

#if canImport(Glibc)
import Glibc
#endif

/// The soft limit on open files raised to the hard one, as long-running servers do: each Cast
/// session, simulated device listener and served file holds descriptors, and the usual soft
/// default (1024) ends a fleet long before the hard limit would. The shipped systemd unit sets
/// both limits with `LimitNOFILE=`, so there this changes nothing.
enum DescriptorLimit {
    /// Raises the soft limit to the hard one. Logs the change at info and a failure at debug (the
    /// soft limit then stays).
    static func raise(log: Logger) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            let reason = String(cString: strerror(errno))
            log.debug("open-file limit stays at \(before) (raising it to \(limit.rlim_max): \(reason))", [
                "soft": .int(before), "hard": .int(limit.rlim_max), "reason": .string(reason),
            ])
            return
        }
        log.info("open-file limit raised from \(before) to \(limit.rlim_max)", ["from": .int(before), "to": .int(limit.rlim_max)])
    }
}
