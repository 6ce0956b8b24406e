import Glibc

/// A local file to cast: its absolute path, name and first bytes (for the media-format probe).
package struct LocalMediaFile: Sendable {
    package struct Failure: Error, CustomStringConvertible { package var description: String }

    package static let headSize = 65_536

    package let path: String
    package let name: String
    package let size: Int64
    package let head: [UInt8]

    /// `given`, resolved, with its first `headSize` bytes.
    package static func open(_ given: String, headSize: Int = LocalMediaFile.headSize) throws(Failure) -> LocalMediaFile {
        guard let resolved = realpath(given, nil) else { throw Failure(description: String(cString: strerror(errno))) }
        let path = String(cString: resolved)
        free(resolved)
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(description: "not a regular file") }
        var head = [UInt8](repeating: 0, count: max(headSize, 1))
        let count = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw Failure(description: String(cString: strerror(errno))) }
        head.removeSubrange(count...)
        return LocalMediaFile(path: path, name: String(path.split(separator: "/").last ?? "media"), size: Int64(info.st_size), head: head)
    }
}
