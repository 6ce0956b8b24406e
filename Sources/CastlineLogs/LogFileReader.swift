import Glibc

/// Reads JSON Lines inputs a chunk at a time (4 MiB reads, `memchr` for line ends): a file, a
/// rotated set (`castline.jsonl.4` … `.1`, `castline.jsonl`, oldest first), or standard input.
/// Lines are handed over as byte views valid only during the call. Bounded: a line longer than
/// `maximumLineLength` is skipped and counted.
package struct LogFileReader: Sendable {
    package static let chunkSize = 4 << 20
    package static let maximumLineLength = 16 << 20

    package init() {}

    /// `path` and its rotated older files (`path.1`, `path.2`, …), oldest first; a path that is
    /// itself a rotated file (`path.3`) or names no rotated set is taken alone.
    package static func rotatedSet(_ path: String) -> [String] {
        var older: [String] = []
        var index = 1
        while index < 1000, access("\(path).\(index)", F_OK) == 0 {
            older.append("\(path).\(index)")
            index += 1
        }
        return older.reversed() + [path]
    }

    /// Calls `body` with every line of the file at `path` (`-`: standard input) and its 1-based
    /// line number; `body` returns false to stop. Returns false when the file cannot be opened.
    @discardableResult
    package func forEachLine(path: String, report: inout LogReadReport,
                            _ body: (UnsafeRawBufferPointer, Int) -> Bool) -> Bool {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            report.missing.append(path)
            return false
        }
        defer { if fd != 0 { close(fd) } }
        report.inputs.append(path)
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        var capacity = Self.chunkSize
        var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
        defer { buffer.deallocate() }
        var filled = 0
        var lineNumber = 0
        var consumed = 0   // bytes up to the last newline handed over
        var skipping = false
        while true {
            if filled == capacity {
                // One line fills the buffer: grow up to the limit, then skip to its end.
                if capacity < Self.maximumLineLength {
                    let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 64)
                    bigger.copyMemory(from: buffer, byteCount: filled)
                    buffer.deallocate()
                    buffer = bigger
                    capacity *= 2
                } else {
                    skipping = true
                    filled = 0
                }
            }
            let n = read(fd, buffer + filled, capacity - filled)
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            if n == 0 { break }
            let scanStart = filled
            filled += n
            var lineStart = 0
            var cursor = scanStart
            while cursor < filled, let hit = memchr(buffer + cursor, 0x0A, filled - cursor) {
                let end = buffer.distance(to: hit)
                lineNumber += 1
                report.lines += 1
                if skipping {
                    skipping = false
                    report.tooLong += 1
                } else if !body(UnsafeRawBufferPointer(start: buffer + lineStart, count: end - lineStart), lineNumber) {
                    return true
                }
                lineStart = end + 1
                cursor = lineStart
            }
            if lineStart > 0 {
                consumed += lineStart
                filled -= lineStart
                if filled > 0 { memmove(buffer, buffer + lineStart, filled) }
            }
        }
        report.completeBytes = consumed
        if filled > 0 && !skipping {
            lineNumber += 1
            report.lines += 1
            report.unterminatedLastLines += 1
            _ = body(UnsafeRawBufferPointer(start: buffer, count: filled), lineNumber)
        } else if skipping {
            report.tooLong += 1
        }
        return true
    }
}
