internal import CCastShims
import CastCore
import CastLogging

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's last record when code in its process crashes it (an in-process plugin's
/// SIGSEGV): a signal handler appends one record of class `CrashReporter` (the signal, the
/// faulting library and symbol from dladdr, the stack) to the JSON sink's file through a
/// descriptor opened here beforehand, then hands the signal to the handler that was there before
/// (Swift's backtracer). `logs` readers then end the crashed daemon's sessions with its cause.
package enum DaemonCrashRecord {
    /// Opens `path` for appending and installs the handler, once per process; logs where crash
    /// records go (or why they cannot), under its own class.
    package static func install(jsonSinkPath path: String, logSystem: LogSystem) {
        let log = Logger(class: "DaemonCrashRecord", system: logSystem)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            log.warning("no crash record: cannot open \(path): \(String(cString: strerror(errno)))", ["path": .string(path), "errno": .int(Int(errno))])
            return
        }
        castline_crash_record_install(fd)
        log.info("a crash of this process is recorded in \(path)", ["path": .string(path), "fd": .int(Int(fd))])
    }
}
