import Glibc

/// `tail -F` for a JSON Lines file: new lines as they are written, across rotation (the file
/// renamed to `.1` and a new one created: the old one is read to its end first) and truncation.
/// Polls every 200 ms until the task is cancelled.
package enum LogFollower {
    /// Goes on from byte `offset` (where the first read of the file stopped: nothing written
    /// in between is missed); nil: from the current end.
    package static func follow(path: String, from start: Int? = nil, filter: LogFilter, _ body: (LogEntry) -> Void) async {
        var fd: Int32 = -1
        var inode: ino_t = 0
        var offset: off_t = 0
        var pending: [UInt8] = []
        var lineNumber = 0
        // Start at the current end: what is there was read already.
        var st = stat()
        if stat(path, &st) == 0 {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            inode = st.st_ino
            offset = start.map { off_t(min($0, Int(st.st_size))) } ?? st.st_size
        }
        defer { if fd >= 0 { close(fd) } }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        func drain() {
            guard fd >= 0 else { return }
            while true {
                let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
                if n <= 0 { return }
                offset += off_t(n)
                pending.append(contentsOf: chunk[0..<n])
                while let newline = pending.firstIndex(of: 0x0A) {
                    lineNumber += 1
                    let result = pending[..<newline].withUnsafeBytes { LogLineDecoder.decode($0, origin: LogOrigin(input: path, line: lineNumber)) }
                    pending.removeSubrange(...newline)
                    if case .success(let entry) = result, filter.matches(entry) { body(entry) }
                }
                if pending.count > LogFileReader.maximumLineLength { pending.removeAll() }
            }
        }
        while !Task.isCancelled {
            drain()
            var now = stat()
            if stat(path, &now) == 0, now.st_ino != inode || now.st_size < offset {
                // Rotated or truncated: finish the old file, then start the new one from its beginning.
                drain()
                if fd >= 0 { close(fd) }
                fd = open(path, O_RDONLY | O_CLOEXEC)
                inode = now.st_ino
                offset = 0
                pending.removeAll()
                continue
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}
