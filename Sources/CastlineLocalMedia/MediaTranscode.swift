internal import CCastShims
import CastCore
import CastLogging
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One ffmpeg child remuxing or transcoding a file for one cast (``TranscodeArguments``).
///
/// The child is tethered (`castline_spawn_tethered`: its own process group, SIGKILL when castline
/// dies, even by SIGKILL) and stopped with the cast (``stop()``: SIGTERM to the group, SIGKILL
/// after 2 s, reaped). Its progress (`-progress pipe:1`: `out_time_us`) is read on a queue of its
/// own; ``position`` is the media time written so far. Its folder is removed when it stops.
package final class MediaTranscode: Sendable {
    package let pid: Int32
    package let folder: String
    package let arguments: TranscodeArguments
    private let state = Mutex(State())
    private let log: Logger

    struct State {
        var position: Double = 0
        var finished = false
        var exitStatus: Int32?
        var stopped = false
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Seconds of media written so far (relative to the input's start, `arguments.start` included).
    package var position: Double { state.withLock { $0.position } + arguments.start }
    /// ffmpeg wrote everything and exited 0.
    package var finished: Bool { state.withLock { $0.finished } }
    package var exitStatus: Int32? { state.withLock { $0.exitStatus } }

    /// The first ffmpeg on PATH (`/usr/bin/ffmpeg` on Debian), or nil.
    package static func ffmpegPath(searchPath: String?) -> String? {
        let path = searchPath ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/ffmpeg"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// A fresh private folder for a transcode's output (`/tmp/castline-transcode-XXXXXX`),
    /// holding the creating process's pid in `owner`; folders whose owner has died (a SIGKILLed
    /// castline cannot clean up) are removed first.
    package static func makeFolder() throws(Failure) -> String {
        sweepOrphans()
        var template = Array("/tmp/castline-transcode-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure(description: "cannot create a folder for the transcode: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        let fd = open(folder + "/owner", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if fd >= 0 {
            let text = Array("\(getpid())\n".utf8)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        return folder
    }

    /// Removes `/tmp/castline-transcode-*` folders of this user whose `owner` process is gone.
    static func sweepOrphans() {
        guard let dir = opendir("/tmp") else { return }
        var stale: [String] = []
        while let entry = readdir(dir), stale.count < 1000 {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix("castline-transcode-") else { continue }
            let folder = "/tmp/" + name
            var info = stat()
            guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid() else { continue }
            let owner = lastLines(of: folder + "/owner").split(whereSeparator: { $0 == " " || $0 == "\n" }).first.map(String.init) ?? ""
            if let pid = Int32(owner), pid > 0, kill(pid, 0) != 0, errno == ESRCH { stale.append(folder) }
        }
        closedir(dir)
        stale.forEach(removeFolder)
    }

    /// Starts ffmpeg at `ffmpeg` with `arguments`.
    package static func start(ffmpeg: String, arguments: TranscodeArguments, logSystem: LogSystem) throws(Failure) -> MediaTranscode {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let errorLog = open(arguments.folder + "/ffmpeg.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let argv = ([ffmpeg] + arguments.arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let pid = castline_spawn_tethered(ffmpeg, argv, pipeFDs[1], errorLog)
        close(pipeFDs[1])
        if errorLog >= 0 { close(errorLog) }
        guard pid > 0 else {
            close(pipeFDs[0])
            throw Failure(description: "cannot start \(ffmpeg): \(String(cString: strerror(-pid)))")
        }
        let transcode = MediaTranscode(pid: pid, arguments: arguments, log: Logger(class: "MediaTranscode", system: logSystem))
        transcode.log.info("ffmpeg started: \(arguments.plan.action.rawValue) \(arguments.input)", [
            "ffmpegPid": .int(Int(pid)), "action": .string(arguments.plan.action.rawValue), "folder": .string(arguments.folder),
            "start": .double(arguments.start),
        ])
        transcode.watch(progressFD: pipeFDs[0])
        return transcode
    }

    private init(pid: Int32, arguments: TranscodeArguments, log: Logger) {
        self.pid = pid
        self.folder = arguments.folder
        self.arguments = arguments
        self.log = log
    }

    /// Reads `key=value` progress lines until ffmpeg closes its stdout, then reaps it.
    private func watch(progressFD fd: Int32) {
        DispatchQueue(label: "castline.transcode.\(pid)").async { [self] in
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                pending += buffer[0..<n]
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    if line.hasPrefix("out_time_us="), let us = Double(line.dropFirst(12)), us >= 0 {
                        state.withLock { $0.position = max($0.position, us / 1_000_000) }
                    }
                }
            }
            close(fd)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
            let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            let stopped = state.withLock { s -> Bool in
                s.exitStatus = code
                s.finished = code == 0
                return s.stopped
            }
            if code == 0 {
                log.info("ffmpeg finished", ["ffmpegPid": .int(Int(pid)), "position": .double(position)])
            } else if !stopped {
                log.warning("ffmpeg failed (status \(code)): \(errorTail())", ["ffmpegPid": .int(Int(pid)), "status": .int(Int(code))])
            }
        }
    }

    /// The last lines ffmpeg wrote to its log (why it failed).
    package func errorTail() -> String { Self.lastLines(of: folder + "/ffmpeg.log") }

    /// Waits (polling every 100 ms, at most `timeout` seconds) until the playlist lists
    /// `segments` segments or ffmpeg finished; throws when ffmpeg failed or time ran out.
    package func waitUntilPlayable(segments: Int = 1, timeout: Double) async throws(Failure) {
        let rounds = max(1, Int(timeout * 10))
        for _ in 0..<rounds {
            if let status = exitStatus, status != 0 { throw Failure(description: "ffmpeg failed (status \(status)): \(errorTail())") }
            if playlistSegments() >= segments || finished { return }
            try? await Task.sleep(nanoseconds: 100_000_000)
        }
        throw Failure(description: "ffmpeg wrote no playable segment within \(timeout.formatted) s")
    }

    /// Waits until `position` (seconds of the input) is written, at most `timeout` seconds.
    package func waitUntilWritten(_ target: Double, timeout: Double) async -> Bool {
        let rounds = max(1, Int(timeout * 10))
        for _ in 0..<rounds {
            if position >= target || finished || exitStatus != nil { return position >= target || finished }
            try? await Task.sleep(nanoseconds: 100_000_000)
        }
        return position >= target
    }

    /// `#EXTINF` lines in the playlist written so far.
    func playlistSegments() -> Int {
        let fd = open(folder + "/" + TranscodeArguments.playlistName, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while text.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            text += buffer[0..<n]
        }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("#EXTINF") }.count
    }

    /// Stops ffmpeg (SIGTERM to its group, SIGKILL after 2 s), reaps it and removes its folder.
    package func stop() async {
        await stopKeepingFolder()
        removeFolder()
    }

    /// Stops ffmpeg and reaps it; the folder stays (a retry writes into it).
    package func stopKeepingFolder() async {
        let alreadyDone = state.withLock { s -> Bool in
            s.stopped = true
            return s.exitStatus != nil
        }
        if !alreadyDone {
            _ = kill(-pid, SIGTERM)
            for _ in 0..<20 where exitStatus == nil { try? await Task.sleep(nanoseconds: 100_000_000) }
            if exitStatus == nil { _ = kill(-pid, SIGKILL) }
            for _ in 0..<50 where exitStatus == nil { try? await Task.sleep(nanoseconds: 100_000_000) }
        }
        log.info("transcode stopped", ["ffmpegPid": .int(Int(pid)), "position": .double(position)])
    }

    private func removeFolder() { Self.removeFolder(folder) }

    /// Removes `folder` and the files in it (no subfolders: the transcode writes none).
    package static func removeFolder(_ folder: String) {
        guard let dir = opendir(folder) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { unlink(folder + "/" + name) }
        }
        closedir(dir)
        rmdir(folder)
    }

    /// For `status`: what runs, how far it got.
    package var json: JSONValue {
        let s = state.withLock { $0 }
        var o = JSONObject()
        o.append(key: "action", value: .string(arguments.plan.action.rawValue))
        o.append(key: "pid", value: .int(Int64(pid)))
        o.append(key: "position", value: .double(position.rounded2))
        o.append(key: "state", value: .string(s.exitStatus == nil ? "running" : s.finished ? "finished" : "failed"))
        return .object(o)
    }

    /// Runs ffmpeg to its end (a subtitle conversion), tethered like a transcode: at most
    /// `timeout` seconds, then its group is killed. Throws with ffmpeg's last words on failure.
    package static func run(ffmpeg: String, arguments: [String], errorLog: String, timeout: Double) async throws(Failure) {
        let log = open(errorLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let argv = ([ffmpeg] + arguments).map { strdup($0) } + [nil]
        let pid = castline_spawn_tethered(ffmpeg, argv, -1, log)
        argv.forEach { free($0) }
        if log >= 0 { close(log) }
        guard pid > 0 else { throw Failure(description: "cannot start \(ffmpeg): \(String(cString: strerror(-pid)))") }
        var raw: Int32 = 0
        for _ in 0..<max(1, Int(timeout * 20)) {
            let done = waitpid(pid, &raw, WNOHANG)
            if done == pid {
                guard raw == 0 else { throw Failure(description: lastLines(of: errorLog)) }
                return
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        _ = kill(-pid, SIGKILL)
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        throw Failure(description: "ffmpeg took more than \(timeout.formatted) s")
    }

    static func lastLines(of path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "no log" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let size = lseek(fd, 0, SEEK_END)
        _ = lseek(fd, max(0, size - 2048), SEEK_SET)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
        return text.split(separator: "\n").suffix(3).joined(separator: " / ")
    }
}
