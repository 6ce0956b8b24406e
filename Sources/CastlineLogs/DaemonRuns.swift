import CastCore
import CastLogging

/// The daemon processes in a log (`pid`, `role: daemon`) and how each ended: in order (its
/// `Daemon` `stopping` record), by a crash (its `CrashReporter` record: the signal and the
/// faulting library, written by its signal handler), or without a word (killed, or a crash with
/// no JSON sink to record it). A new daemon ends what an earlier one left open, at that one's
/// last record, with ``endReason(of:)``. Shared by `stats` and `timeline`. Pure.
struct DaemonRuns: Sendable {
    struct Run: Sendable {
        var last: Int64
        var stopped = false
        /// `SIGSEGV in libX.so (symbol)` from the crash record.
        var crash: String?
    }

    private(set) var runs: [String: Run] = [:]

    /// Notes a record; the pids of the earlier daemons when it is a new daemon's first.
    mutating func note(_ e: LogEntry) -> [String] {
        guard let pid = e.text("pid"), e.text("role") == "daemon" else { return [] }
        let earlier = runs[pid] == nil ? runs.keys.filter { $0 != pid }.sorted() : []
        var run = runs[pid] ?? Run(last: e.time)
        run.last = max(run.last, e.time)
        if e.className == "Daemon", e.text("stopCasting") != nil { run.stopped = true }
        if e.className == "CrashReporter", let signal = e.text("signal") {
            let library = e.text("library").map { " in " + ($0.split(separator: "/").last.map(String.init) ?? $0) } ?? ""
            run.crash = signal + library + (e.text("symbol").map { " (\($0))" } ?? "")
        }
        runs[pid] = run
        return earlier
    }

    func last(of pid: String) -> Int64? { runs[pid]?.last }

    /// Why what daemon `pid` left open ended: `daemon crashed: SIGSEGV in libX.so (pid 12)`,
    /// `daemon crashed or was killed: no orderly stop (pid 12: no record after this)`, or
    /// `castline stopped (pid 12: no record after this)`.
    func endReason(of pid: String) -> String {
        guard let run = runs[pid] else { return "castline stopped (pid \(pid): no record after this)" }
        if let crash = run.crash { return "\(Self.crashed): \(crash) (pid \(pid))" }
        if !run.stopped { return "\(Self.crashed) or was killed: no orderly stop (pid \(pid): no record after this)" }
        return "castline stopped (pid \(pid): no record after this)"
    }

    static let crashed = "daemon crashed"
}
