import CastTestSupport
import Foundation
import Testing

/// A real systemd-journald for one test: started in a private mount namespace whose `/run` is a
/// scratch folder (the host's journal is never touched), read back with `journalctl -D`.
/// Clients run inside its namespace with `nsenter -t <pid> -m`. Stopped by PID.
final class JournaldHarness {
    let folder: String
    let process: Process
    var runDirectory: String { folder + "/run" }
    var pid: Int32 { process.processIdentifier }

    init() throws {
        folder = ScratchFolder("journald").path
        try FileManager.default.createDirectory(atPath: folder + "/run/systemd/journald.conf.d", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/empty", withIntermediateDirectories: true)
        try """
        [Journal]
        Storage=volatile
        ReadKMsg=no
        ForwardToSyslog=no
        ForwardToWall=no
        ForwardToConsole=no
        RuntimeMaxUse=64M
        RateLimitBurst=0
        """.write(toFile: folder + "/run/systemd/journald.conf.d/test.conf", atomically: true, encoding: .utf8)
        process = Process()
        // unshare execs sh, which execs journald: the Process's pid is journald's.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "--propagation", "private", "sh", "-c",
                             #"mount --bind "$1" /run && { [ ! -d /var/log/journal ] || mount --bind "$2" /var/log/journal; } && exec /lib/systemd/systemd-journald"#,
                             "sh", folder + "/run", folder + "/empty"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var st = stat()
        let socketPath = runDirectory + "/systemd/journal/socket"
        guard pollUntilBlocking(timeout: 10, every: .milliseconds(20), { stat(socketPath, &st) == 0 }), process.isRunning else {
            stop()
            throw HarnessError("systemd-journald did not come up within 10 s")
        }
    }

    /// Stops journald (SIGTERM, then SIGKILL after 5 s). Its socket file stays: stale.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(pid, SIGTERM)
        if !pollUntilBlocking(timeout: 5, every: .milliseconds(20), { !process.isRunning }) { Glibc.kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    func stop() {
        kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `arguments` inside journald's mount namespace (or, once it is gone, in a namespace
    /// with the same `/run`), bounded to `timeout`; returns exit status and stdout.
    func run(_ arguments: [String], timeout: Double = 30) throws -> (Int32, String) {
        let p = Process()
        if process.isRunning {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
            p.arguments = ["-t", String(pid), "-m"] + arguments
        } else {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            p.arguments = ["-m", "--propagation", "private", "sh", "-c", #"mount --bind "$0" /run && exec "$@""#, runDirectory] + arguments
        }
        return try Self.capture(p, timeout: timeout)
    }

    /// The journal files' folder (`journalctl -D`, `sd_journal_open_directory`).
    var journalDirectory: String { runDirectory + "/log/journal" }

    /// `journalctl -o json` output for this SYSLOG_IDENTIFIER, one line per entry.
    func journalLines(identifier: String) throws -> [String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        p.arguments = ["-D", journalDirectory, "--no-pager", "-o", "json", "SYSLOG_IDENTIFIER=\(identifier)"]
        let (status, output) = try Self.capture(p, timeout: 30)
        guard status == 0 else { throw HarnessError("journalctl failed (\(status)): \(output)") }
        return output.split(separator: "\n").map(String.init)
    }

    /// Entries with this SYSLOG_IDENTIFIER, as `journalctl -o json` prints them (one object each).
    func entries(identifier: String) throws -> [[String: Any]] {
        try journalLines(identifier: identifier).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Runs `p` to the end, reading its output as it comes (a full pipe must never stall it);
    /// terminated after `timeout` seconds.
    static func capture(_ p: Process, timeout: Double) throws -> (Int32, String) {
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let watchdog = DispatchWorkItem { if p.isRunning { p.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        watchdog.cancel()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
