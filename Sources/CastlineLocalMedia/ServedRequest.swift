/// One request a ``MediaFileServer`` answered, as kept in ``MediaFileServer/requests``.
package struct ServedRequest: Sendable, Hashable, CustomStringConvertible {
    /// The request method (`GET`, `HEAD`, `OPTIONS`, …).
    package var method: String
    /// The request target as sent, query included.
    package var path: String
    /// The `Range` header as sent (several fields joined with `, `); nil when absent.
    package var range: String?
    /// The response status code.
    package var status: Int
    /// Body bytes handed to the socket: the body length once the whole response was written,
    /// 0 when the client went away first (see ``completed``) and for `HEAD`.
    package var bytes: Int64
    /// Whether the whole response was written before the connection closed.
    package var completed: Bool
    /// The client's address (`192.168.1.20:51234`, `[fe80::1]:51234`).
    package var peer: String

    /// A record of one answered request.
    package init(method: String, path: String, range: String?, status: Int, bytes: Int64, completed: Bool, peer: String) {
        self.method = method
        self.path = path
        self.range = range
        self.status = status
        self.bytes = bytes
        self.completed = completed
        self.peer = peer
    }

    /// `GET /token/movie.mp4 range=bytes=0- → 206 (65536 bytes) from 192.168.1.20:51234`.
    package var description: String {
        let rangeText = range.map { " range=\($0)" } ?? ""
        let aborted = completed ? "" : ", aborted"
        return "\(method) \(path)\(rangeText) → \(status) (\(bytes) bytes\(aborted)) from \(peer)"
    }
}
