/// A local file (or folder) that a ``MediaFileServer`` publishes, and the `Content-Type` it is
/// served with.
package struct ServedFile: Sendable, Hashable {
    /// The file's absolute path on this machine, without symlinks (a `realpath` result): it is
    /// opened without following any.
    package var path: String
    /// The `Content-Type` sent with the file (`video/mp4`, `audio/mpeg`, …); for a folder, that of
    /// its files whose extension says nothing.
    package var contentType: String
    /// The allowed folder the path lies in (`media.roots`): the file is opened beneath it, and
    /// nothing outside it can be. nil: opened from `/`.
    package var root: String?
    /// The name views show instead of the URL (its token never leaves castline); nil: the
    /// published name.
    package var displayName: String?

    /// A file served as `contentType` (`application/octet-stream` when not given).
    package init(path: String, contentType: String = "application/octet-stream", root: String? = nil, displayName: String? = nil) {
        self.path = path
        self.contentType = contentType
        self.root = root
        self.displayName = displayName
    }

    /// The last component of ``path`` (`/home/me/movie.mp4` → `movie.mp4`): the name the file is
    /// published under when no other name is given.
    package var fileName: String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        return components.last.map(String.init) ?? path
    }
}
