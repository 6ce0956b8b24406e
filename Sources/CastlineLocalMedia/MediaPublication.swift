/// The files one cast needs, published on a ``MediaFileServer`` for the device that fetches them:
/// their URLs while the cast lives, and ``revoke()`` when it ends (a refused LOAD, a stop, other
/// media on the device). Revoking twice is harmless. `Sendable`.
package final class MediaPublication: Sendable {
    private let server: MediaFileServer
    /// Published name → token.
    private let tokens: [String: String]

    init(server: MediaFileServer, tokens: [String: String]) {
        self.server = server
        self.tokens = tokens
    }

    /// The URL of the file published as `name` (a folder's name with or without its `/`); the
    /// server's 404 path when nothing was published under that name.
    package func url(for name: String) -> String {
        if let token = tokens[name] ?? tokens[name + "/"] { return server.url(token: token, name: name) }
        return server.url(token: "0", name: name)
    }

    /// Every published URL.
    package var urls: [String] { tokens.map { server.url(token: $0.value, name: $0.key) } }

    /// Whether `url` is one of this publication's (its token, on this server).
    package func contains(_ url: String) -> Bool {
        tokens.values.contains { token in url.contains("/\(token)/") }
    }

    /// The published names.
    package var names: [String] { tokens.keys.sorted() }

    /// Stops serving these files; requests in flight finish.
    package func revoke() {
        server.revoke(Array(tokens.values))
    }
}
