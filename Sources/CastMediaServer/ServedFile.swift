/// A local file that a ``MediaFileServer`` serves, and the `Content-Type` it is served with.
///
/// The file is opened per request, so it may grow or be replaced while the server runs; its
/// size is taken when a request opens it.
package struct ServedFile: Sendable, Hashable {
    /// The file's path on this machine (absolute, or relative to the working directory).
    package var path: String
    /// The `Content-Type` sent with the file (`video/mp4`, `audio/mpeg`, …).
    package var contentType: String

    /// A file served as `contentType` (`application/octet-stream` when not given).
    package init(path: String, contentType: String = "application/octet-stream") {
        self.path = path
        self.contentType = contentType
    }

    /// The last component of ``path`` (`/home/me/movie.mp4` → `movie.mp4`): the name the file is
    /// published under when no other name is given.
    package var fileName: String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        return components.last.map(String.init) ?? path
    }
}
