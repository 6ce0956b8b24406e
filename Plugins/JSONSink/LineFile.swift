import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// Appends whole lines to a file (or stdout) so that no crash or `kill -9` leaves half a line.
///
/// Why it is built like this: Linux copies a `write(2)` into a regular file page by page (folio
/// by folio) and stops between pages when a fatal signal is pending, so a write can be cut at any
/// page boundary of the file, and only there. So every page boundary is made a line boundary:
/// when a line would straddle one, the line before it is padded with spaces before its `\n`
/// (JSON allows trailing whitespace) up to the boundary. Then a whole batch goes out in one
/// `write(2)`, and wherever a kill cuts it, the file ends with a whole line. Two rare cases
/// remain: a line longer than a page straddles anyway (counted in ``longLines``: a kill in the
/// middle of it can cut it), and when a line does not fit in what an earlier batch left of a page,
/// a blank padding line fills it. A partial last line left anyway (an older castline, a full disk)
/// is cut off when the file is opened again.
///
/// Rotation: when a line would take the file past `maxBytes`, what is pending is written,
/// `path` becomes `path.1`, older files shift up to `path.<maxFiles-1>`, the oldest is removed.
/// Only a regular file is rotated, padded or repaired: a path that names a device, a FIFO or a
/// socket (`/dev/null`, `/dev/stderr`, a pipe to a collector) is written like stdout. (Rotating
/// `/dev/null` once renamed the device away and left a regular file in its place.)
/// Not thread-safe: one writer.
final class LineFile {
    let path: String?
    let maxBytes: Int
    let maxFiles: Int
    let syncOnFlush: Bool
    private(set) var fd: Int32
    private(set) var size: Int = 0
    /// Whether `fd` is a regular file (only those are padded, rotated and repaired).
    private(set) var isRegularFile = false
    private let page: Int
    private var out: [UInt8] = []
    /// Lines lost to write errors (full disk…).
    private(set) var droppedLines: UInt64 = 0
    /// Lines longer than a page (written alone).
    private(set) var longLines: UInt64 = 0
    /// Bytes of a partial last line removed when the file was opened.
    private(set) var repairedBytes: Int = 0
    /// The last write or rotation failure; nil again once a write goes through.
    private(set) var lastError: String?

    /// Opens (creating with mode 0640) or, for a nil path, uses stdout.
    init(path: String?, maxBytes: Int, maxFiles: Int, syncOnFlush: Bool) throws(PluginError) {
        self.path = path
        self.maxBytes = max(maxBytes, 4096)
        self.maxFiles = max(maxFiles, 1)
        self.syncOnFlush = syncOnFlush
        page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 512)
        out.reserveCapacity(1 << 17)
        if let path {
            fd = try LineFile.open(path)
            isRegularFile = LineFile.isRegular(fd)
            size = isRegularFile ? try repairTail() : 0
        } else {
            fd = STDOUT_FILENO
        }
    }

    deinit {
        if path != nil, fd >= 0 { Glibc.close(fd) }
    }

    /// Non-blocking open (a FIFO without a reader is refused with ENXIO instead of blocking
    /// forever), then blocking writes.
    private static func open(_ path: String) throws(PluginError) -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o640)
        guard fd >= 0 else {
            let hint = errno == ENXIO ? " (a FIFO with no reader: start the reader first)" : ""
            throw PluginError("cannot open \(path): \(String(cString: strerror(errno)))\(hint)")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    private static func isRegular(_ fd: Int32) -> Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// Cuts a partial last line (no trailing `\n`); returns the resulting size.
    private func repairTail() throws(PluginError) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw PluginError("cannot stat \(path ?? "-"): \(String(cString: strerror(errno)))") }
        let fileSize = Int(st.st_size)
        guard fileSize > 0 else { return 0 }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var end = fileSize
        guard let reader = Optional(Glibc.open(path!, O_RDONLY | O_CLOEXEC)), reader >= 0 else { return fileSize }
        defer { Glibc.close(reader) }
        while end > 0 {
            let start = max(0, end - buffer.count)
            let n = pread(reader, &buffer, end - start, off_t(start))
            guard n == end - start else { return fileSize }
            if let newline = buffer[0..<n].lastIndex(of: 0x0A) {
                let keep = start + newline + 1
                if keep != fileSize {
                    guard ftruncate(fd, off_t(keep)) == 0 else { return fileSize }
                    repairedBytes = fileSize - keep
                }
                return keep
            }
            end = start
        }
        _ = ftruncate(fd, 0)
        repairedBytes = fileSize
        return 0
    }

    /// Writes the lines in `bytes`; `lineEnds[i]` is the offset just past line i's `\n`.
    func append(_ bytes: UnsafeBufferPointer<UInt8>, lineEnds: [Int]) {
        let isFile = isRegularFile  // never true for stdout
        // A local moved out of the property: no exclusivity checks in the loop.
        var out = self.out
        self.out = []
        out.removeAll(keepingCapacity: true)
        var size = self.size
        let page = self.page, maxBytes = self.maxBytes
        var pendingLines = 0
        do {
            let all = bytes
            var lineStart = 0
            // Lines are copied into `out` in runs: only a padding or a rotation cuts a run.
            var runStart = 0
            func takeRun() {
                if lineStart > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: all[runStart..<lineStart])) }
                runStart = lineStart
            }
            for end in lineEnds {
                let length = end - lineStart
                if isFile {
                    let pending = out.count + (lineStart - runStart)
                    if size + pending + length > maxBytes, size + pending > 0 {
                        takeRun()
                        flushPending(&out, lines: pendingLines)
                        pendingLines = 0
                        rotate()
                        size = self.size
                    }
                    let offset = size + out.count + (lineStart - runStart)
                    let remaining = page - offset % page
                    if length > remaining {
                        if length > page {
                            self.longLines += 1
                        } else {
                            takeRun()
                            if out.isEmpty {
                                // The previous line is already in the file: a blank line fills the page.
                                out.append(contentsOf: repeatElement(0x20, count: remaining - 1))
                                out.append(0x0A)
                            } else {
                                // Pad the previous line up to the boundary: its `\n` moves to the page's last byte.
                                out[out.count - 1] = 0x20
                                out.append(contentsOf: repeatElement(0x20, count: remaining - 1))
                                out.append(0x0A)
                            }
                        }
                    }
                }
                pendingLines += 1
                lineStart = end
            }
            takeRun()
        }
        // Little left of the page: pad the batch's last line to the boundary, so the next batch
        // starts on a fresh page instead of a blank padding line.
        if isFile, !out.isEmpty {
            let remaining = page - (size + out.count) % page
            if remaining < 512, remaining < page {
                out[out.count - 1] = 0x20
                out.append(contentsOf: repeatElement(0x20, count: remaining - 1))
                out.append(0x0A)
            }
        }
        flushPending(&out, lines: pendingLines)
        self.out = out
    }

    /// One write(2) of everything pending (whole lines, page boundaries on line boundaries).
    private func flushPending(_ out: inout [UInt8], lines: Int) {
        guard !out.isEmpty else { return }
        defer { out.removeAll(keepingCapacity: true) }
        guard fd >= 0 else {
            droppedLines += UInt64(lines)
            return
        }
        let before = size
        var done = 0
        // A pipe (stdout or a FIFO) whose reader went away raises SIGPIPE, whose default action
        // ends the whole process: blocked on this thread while writing, the write fails with
        // EPIPE instead (counted and reported), and the pending signal is consumed.
        var pipeSignal = sigset_t(), previousMask = sigset_t()
        if !isRegularFile {
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
        }
        defer {
            if !isRegularFile {
                var pending = sigset_t()
                if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1, sigismember(&previousMask, SIGPIPE) == 0 {
                    var now = timespec()
                    _ = sigtimedwait(&pipeSignal, nil, &now)
                }
                pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            }
        }
        out.withUnsafeBufferPointer { chunk in
            while done < chunk.count {
                let n = Glibc.write(fd, chunk.baseAddress! + done, chunk.count - done)
                if n < 0, errno == EINTR { continue }
                if n <= 0 {
                    lastError = "write to \(path ?? "stdout") failed: \(String(cString: strerror(errno)))"
                    droppedLines += UInt64(lines)
                    // Never leave part of a batch behind (it may end inside a line).
                    if isRegularFile, done > 0, ftruncate(fd, off_t(before)) == 0 { size = before }
                    return
                }
                done += n
                size += n
            }
        }
        if done == out.count { lastError = nil }
    }

    private func rotate() {
        guard let path, isRegularFile else { return }
        Glibc.close(fd)
        fd = -1
        if maxFiles > 1 {
            unlink("\(path).\(maxFiles - 1)")
            if maxFiles > 2 {
                for i in stride(from: maxFiles - 2, through: 1, by: -1) { rename("\(path).\(i)", "\(path).\(i + 1)") }
            }
            rename(path, "\(path).1")
        } else {
            unlink(path)
        }
        do {
            fd = try LineFile.open(path)
            isRegularFile = LineFile.isRegular(fd)
            size = 0
        } catch {
            lastError = error.reason
        }
    }

    /// fdatasync when configured (stdout: nothing to do).
    func flush() {
        if syncOnFlush, path != nil, fd >= 0 { fdatasync(fd) }
    }
}
