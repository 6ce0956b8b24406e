internal import CSystemd
import Glibc

/// systemd's notify protocol through libsystemd's `sd_notify`: READY, STATUS, WATCHDOG,
/// RELOADING and STOPPING. Without `NOTIFY_SOCKET` (not run by systemd) every call is a no-op.
/// Thread-safe (sd_notify opens its own socket per call).
package struct SystemdNotifier: Sendable {
    package init() {}

    /// True when a service manager listens (`NOTIFY_SOCKET` is set).
    package var isActive: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// The watchdog interval systemd expects pings within (`WatchdogSec=`), or nil when off.
    package var watchdogInterval: Double? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return Double(usec) / 1_000_000
    }

    /// Sends `state` lines (`READY=1\nSTATUS=…`); returns false when systemd did not get it.
    @discardableResult
    package func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    package func ready(status: String) { notify("READY=1\nSTATUS=\(Self.clean(status))\nMAINPID=\(getpid())") }
    package func status(_ text: String) { notify("STATUS=\(Self.clean(text))") }
    package func watchdog() { notify("WATCHDOG=1") }
    package func stopping(_ text: String) { notify("STOPPING=1\nSTATUS=\(Self.clean(text))") }

    /// Reload notification as systemd 253+ `Type=notify-reload` expects (harmless before).
    package func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    package func reloaded(status: String) { notify("READY=1\nSTATUS=\(Self.clean(status))") }

    /// STATUS is one line.
    static func clean(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 }.prefix(200))
    }
}
