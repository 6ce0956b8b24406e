import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// Appends whole lines to a file (or stdout) so that no crash or `kill -9` leaves half a line.
///
/// Why it is built like this: Linux copies a `write(2)` into a regular file page by page and
/// stops between pages when a fatal signal is pending, so a multi-page write can be cut after
/// any page. A write that stays inside one page is never cut. So every write here holds whole
/// lines and never crosses a page boundary: when the next line does not fit in the rest of the
/// page, the previous line is padded with spaces before its `\n` (JSON allows trailing
/// whitespace) so the chunk ends exactly at the page end. Two rare cases remain: a line longer
/// than a page is written alone (counted in ``longLines``: a kill in the middle of it can cut
/// it), and a line that does not fit in the rest of a page left by an earlier batch is preceded
/// by a blank padding line. A partial last line left anyway (an older castline, a full disk) is
/// cut off when the file is opened again.
///
/// Rotation: when a write would take the file past `maxBytes`, `path` becomes `path.1`, older
/// files shift up to `path.<maxFiles-1>`, the oldest is removed. Not thread-safe: one writer.
final class LineFile {
    let path: String?
    let maxBytes: Int
    let maxFiles: Int
    let syncOnFlush: Bool
    private(set) var fd: Int32
    private(set) var size: Int = 0
    private let page: Int
    private var chunk: [UInt8] = []
    /// Lines lost to write errors (full disk…).
    private(set) var droppedLines: UInt64 = 0
    /// Lines longer than a page (written alone).
    private(set) var longLines: UInt64 = 0
    private(set) var rotations: UInt64 = 0
    /// Bytes of a partial last line removed when the file was opened.
    private(set) var repairedBytes: Int = 0
    private(set) var lastError: String?

    /// Opens (creating with mode 0640) or, for a nil path, uses stdout.
    init(path: String?, maxBytes: Int, maxFiles: Int, syncOnFlush: Bool) throws(PluginError) {
        self.path = path
        self.maxBytes = max(maxBytes, 4096)
        self.maxFiles = max(maxFiles, 1)
        self.syncOnFlush = syncOnFlush
        page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 512)
        chunk.reserveCapacity(page)
        if let path {
            fd = try LineFile.open(path)
            size = try repairTail()
        } else {
            fd = STDOUT_FILENO
        }
    }

    deinit {
        if path != nil, fd >= 0 { Glibc.close(fd) }
    }

    private static func open(_ path: String) throws(PluginError) -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw PluginError("cannot open \(path): \(String(cString: strerror(errno)))") }
        return fd
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
    func append(_ bytes: [UInt8], lineEnds: [Int]) {
        bytes.withUnsafeBufferPointer { all in
            var index = 0
            var lineStart = 0
            while index < lineEnds.count {
                let isFile = path != nil
                let remaining = isFile ? page - size % page : page
                // Whole lines that fit in the rest of this page.
                var end = index
                var chunkEnd = lineStart
                while end < lineEnds.count, lineEnds[end] - lineStart <= remaining {
                    chunkEnd = lineEnds[end]
                    end += 1
                }
                if end == index {
                    let lineLength = lineEnds[index] - lineStart
                    if !isFile || remaining == page || lineLength > page {
                        // Longer than a page (or stdout): alone, unpadded.
                        if lineLength > page { longLines += 1 }
                        write(UnsafeBufferPointer(rebasing: all[lineStart..<lineEnds[index]]), lines: 1)
                        lineStart = lineEnds[index]
                        index += 1
                    } else {
                        // A blank padding line up to the page end, then the line on a fresh page.
                        chunk.removeAll(keepingCapacity: true)
                        chunk.append(contentsOf: repeatElement(0x20, count: remaining - 1))
                        chunk.append(0x0A)
                        chunk.withUnsafeBufferPointer { write($0, lines: 0) }
                    }
                    continue
                }
                let count = chunkEnd - lineStart
                let more = end < lineEnds.count
                // Pad when more lines follow (they start on the next page) or when the rest of the page is too small to be useful.
                let pad = isFile && count < remaining && (more || remaining - count < 512)
                if pad {
                    chunk.removeAll(keepingCapacity: true)
                    chunk.append(contentsOf: UnsafeBufferPointer(rebasing: all[lineStart..<(chunkEnd - 1)]))
                    chunk.append(contentsOf: repeatElement(0x20, count: remaining - count))
                    chunk.append(0x0A)
                    chunk.withUnsafeBufferPointer { write($0, lines: end - index) }
                } else {
                    write(UnsafeBufferPointer(rebasing: all[lineStart..<chunkEnd]), lines: end - index)
                }
                lineStart = chunkEnd
                index = end
            }
        }
    }

    /// One write(2) of whole lines; rotates first when it would pass `maxBytes`.
    private func write(_ chunk: UnsafeBufferPointer<UInt8>, lines: Int) {
        if path != nil, size > 0, size + chunk.count > maxBytes { rotate() }
        guard fd >= 0 else {
            droppedLines += UInt64(lines)
            return
        }
        let before = size
        var done = 0
        while done < chunk.count {
            let n = Glibc.write(fd, chunk.baseAddress! + done, chunk.count - done)
            if n < 0, errno == EINTR { continue }
            if n <= 0 {
                lastError = "write to \(path ?? "stdout") failed: \(String(cString: strerror(errno)))"
                droppedLines += UInt64(lines)
                // Never leave part of a line behind.
                if path != nil, done > 0, ftruncate(fd, off_t(before)) == 0 { size = before }
                return
            }
            done += n
            size += n
        }
    }

    private func rotate() {
        guard let path else { return }
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
        rotations += 1
        do {
            fd = try LineFile.open(path)
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
