/// One request a ``MediaFileServer`` answered, as kept in ``MediaFileServer/requests``.
public struct ServedRequest: Sendable, Hashable, CustomStringConvertible {
    /// The request method (`GET`, `HEAD`, `OPTIONS`, …).
    public var method: String
    /// The request target as sent, query included.
    public var path: String
    /// The `Range` header as sent (several fields joined with `, `); nil when absent.
    public var range: String?
    /// The response status code.
    public var status: Int
    /// Body bytes handed to the socket: the body length once the whole response was written,
    /// 0 when the client went away first (see ``completed``) and for `HEAD`.
    public var bytes: Int64
    /// Whether the whole response was written before the connection closed.
    public var completed: Bool
    /// The client's address (`192.168.1.20:51234`, `[fe80::1]:51234`).
    public var peer: String

    /// A record of one answered request.
    public init(method: String, path: String, range: String?, status: Int, bytes: Int64, completed: Bool, peer: String) {
        self.method = method
        self.path = path
        self.range = range
        self.status = status
        self.bytes = bytes
        self.completed = completed
        self.peer = peer
    }

    /// `GET /token/movie.mp4 range=bytes=0- → 206 (65536 bytes) from 192.168.1.20:51234`.
    public var description: String {
        let rangeText = range.map { " range=\($0)" } ?? ""
        let aborted = completed ? "" : ", aborted"
        return "\(method) \(path)\(rangeText) → \(status) (\(bytes) bytes\(aborted)) from \(peer)"
    }
}
