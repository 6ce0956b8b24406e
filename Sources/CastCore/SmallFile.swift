#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads with a size cap and atomic replacement, for castline's small state files
/// (the nearby permission, the session-resume records, the simulator authority's PEM files).
///
/// Plain POSIX, no Foundation. A reader never sees a partial file: ``replace(path:contents:mode:)``
/// writes a temporary file next to `path` (created with O_NOFOLLOW, mode set with fchmod, so a
/// key is never readable by others even briefly), syncs it and renames it over `path`.
public enum SmallFile {
    /// What failed, on which file (the temporary file for the steps before the rename), and the
    /// `errno`. Callers word their own messages from it.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public enum Step: String, Sendable {
            case open, read, create, setMode, write, sync, rename
            /// The file is larger than the limit (``code`` is 0).
            case tooLarge
        }
        public var path: String
        public var step: Step
        public var code: Int32

        public init(path: String, step: Step, code: Int32) {
            self.path = path
            self.step = step
            self.code = code
        }

        /// `strerror` of ``code``.
        public var reason: String { String(cString: strerror(code)) }

        public var description: String {
            switch step {
            case .tooLarge: return "\(path) is too large"
            case .setMode: return "cannot set the mode of \(path): \(reason)"
            case .rename: return "cannot rename onto \(path): \(reason)"
            default: return "cannot \(step.rawValue) \(path): \(reason)"
            }
        }
    }

    /// The bytes of `path`, at most `limit` of them (more is ``Failure/Step/tooLarge``, and the
    /// rest is not read). Nil when the file does not exist.
    public static func read(path: String, limit: Int) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Failure(path: path, step: .open, code: errno)
        }
        defer { close(fd) }
        return try read(fd: fd, path: path, limit: limit)
    }

    /// The bytes of an open descriptor up to its end, at most `limit` (`path` names it in errors).
    public static func read(fd: Int32, path: String, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, step: .read, code: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
        throw Failure(path: path, step: .tooLarge, code: 0)
    }

    /// Replaces `path` atomically with `contents`, with permission bits `mode`.
    public static func replace(path: String, contents: [UInt8], mode: mode_t) throws(Failure) {
        let temporary = path + ".tmp.\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw Failure(path: temporary, step: .create, code: errno) }
        var failure: Failure?
        if fchmod(fd, mode) != 0 { failure = Failure(path: temporary, step: .setMode, code: errno) }
        var offset = 0
        while failure == nil, offset < contents.count {
            let written = contents[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = Failure(path: temporary, step: .write, code: errno)
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = Failure(path: temporary, step: .sync, code: errno) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = Failure(path: path, step: .rename, code: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }
}
