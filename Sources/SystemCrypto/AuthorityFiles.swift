#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain POSIX file access for the PEM files of a ``SimulatorAuthority`` (no Foundation).
enum AuthorityFiles {
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func reason() -> String { String(cString: strerror(errno)) }

    /// Creates `path` (mode 0700) unless it is already a directory.
    static func makeDirectory(_ path: String) throws(CryptoError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw .file(path: path, reason: "exists and is not a directory") }
            return
        }
        guard mkdir(path, 0o700) == 0 else { throw .file(path: path, reason: "cannot create directory: \(reason())") }
    }

    /// Reads a whole (small) text file.
    static func readText(_ path: String) throws(CryptoError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .file(path: path, reason: "cannot open: \(reason())") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .file(path: path, reason: "cannot read: \(reason())")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > 1 << 20 { throw .file(path: path, reason: "larger than 1 MiB, not a PEM file") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to a temporary file with `mode`, then renames it over `path`, so readers
    /// never see a partial file and a key is never readable by others, even briefly.
    static func writeText(_ path: String, _ text: String, mode: mode_t) throws(CryptoError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw .file(path: temporary, reason: "cannot create: \(reason())") }
        var failure: String?
        if fchmod(fd, mode) != 0 { failure = "cannot set mode: \(reason())" }
        let bytes = Array(text.utf8)
        var offset = 0
        while failure == nil, offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = "cannot write: \(reason())"
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = "cannot sync: \(reason())" }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = "cannot rename to \(path): \(reason())" }
        if let failure {
            unlink(temporary)
            throw .file(path: path, reason: failure)
        }
    }
}
