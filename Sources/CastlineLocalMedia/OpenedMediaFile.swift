import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A local file or folder a ``MediaFileServer`` serves, opened once when it is published: every
/// request reads the same inode through a duplicate of this descriptor, so what the path points
/// to later (a symlink swapped in, a file renamed over it) does not matter.
///
/// Opening walks the path one component at a time from a starting folder (`/`, or a root that
/// the operator allowed) with `O_NOFOLLOW`, refusing `..` and every symlink on the way: a path
/// that `realpath` resolved has none, so only a swap between the check and the open is refused.
/// A folder (a transcoder's HLS output) is held as a directory descriptor, and each file inside
/// is opened relative to it, again with `O_NOFOLLOW`. Thread-safe; closes its descriptor on
/// ``close()`` (the publication's end), never earlier.
package final class OpenedMediaFile: Sendable {
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The descriptor (a regular file, or a folder when ``isFolder``); -1 once closed.
    private let descriptor: Mutex<Int32>
    package let isFolder: Bool
    /// The path it was opened from, for logs.
    package let path: String

    private init(descriptor: Int32, isFolder: Bool, path: String) {
        self.descriptor = Mutex(descriptor)
        self.isFolder = isFolder
        self.path = path
    }

    /// Opens `path` (absolute, without symlinks: a `realpath` result) beneath `root` (an
    /// absolute folder `path` lies in; `/` when nil). A symlink or `..` anywhere below the root is
    /// refused, and so is anything but a regular file or a folder.
    package static func open(_ path: String, beneath root: String? = nil) throws(Failure) -> OpenedMediaFile {
        let base = root ?? "/"
        guard path.hasPrefix("/"), base.hasPrefix("/") else { throw Failure("\(path): not an absolute path") }
        let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard path == trimmedBase || path.hasPrefix(trimmedBase + "/") else { throw Failure("\(path) is not inside \(base)") }
        let relative = path.dropFirst(trimmedBase.count).split(separator: "/", omittingEmptySubsequences: true)
        var current = Glibc.open(trimmedBase.isEmpty ? "/" : trimmedBase, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { throw Failure("\(base): \(errnoText())") }
        for (index, component) in relative.enumerated() {
            guard component != "..", component != "." else {
                Glibc.close(current)
                throw Failure("\(path): '\(component)' is not allowed in a served path")
            }
            let last = index == relative.count - 1
            let next = openat(current, String(component), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? 0 : O_DIRECTORY))
            let reason = errno
            Glibc.close(current)
            guard next >= 0 else {
                throw Failure(reason == ELOOP || reason == ENOTDIR
                    ? "\(path): a symlink was found at '\(component)' (served files are opened without following links)"
                    : "\(path): \(String(cString: strerror(reason)))")
            }
            current = next
        }
        var info = stat()
        guard fstat(current, &info) == 0 else {
            Glibc.close(current)
            throw Failure("\(path): \(errnoText())")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFDIR else {
            Glibc.close(current)
            throw Failure("\(path) is not a regular file")
        }
        return OpenedMediaFile(descriptor: current, isFolder: kind == S_IFDIR, path: path)
    }

    /// A new descriptor for one request: a duplicate of the file's, or for a folder the plain
    /// file `leaf` inside it (opened without following a link). The caller closes it.
    func descriptorForRequest(leaf: String?) -> Result<Int32, Failure> {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return .failure(Failure("no longer served")) }
            return Self.open(descriptor, isFolder: isFolder, leaf: leaf)
        }
    }

    private static func open(_ descriptor: Int32, isFolder: Bool, leaf: String?) -> Result<Int32, Failure> {
        if isFolder {
            guard let leaf, !leaf.isEmpty, !leaf.contains("/"), leaf != "..", leaf != "." else { return .failure(Failure("not a file")) }
            let fd = openat(descriptor, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { return .failure(Failure(errnoText())) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                Glibc.close(fd)
                return .failure(Failure("not a regular file"))
            }
            return .success(fd)
        }
        let fd = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        return fd >= 0 ? .success(fd) : .failure(Failure(errnoText()))
    }

    /// Closes the descriptor (requests in flight keep their own duplicates).
    package func close() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
