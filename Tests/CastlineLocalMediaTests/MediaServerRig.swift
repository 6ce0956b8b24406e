import CastLogging
import CastlineLocalMedia
import CastTestSupport
import Glibc
import NIOCore
import NIOPosix
import Testing

/// A ``MediaFileServer`` on 127.0.0.1 (port 0) with one temporary file of a known pattern
/// published for 127.0.0.1 (the "device"), with helpers to talk to it over raw sockets and to
/// clean up.
struct MediaServerRig {
    let directory: String
    let name: String
    let contents: [UInt8]
    let server: MediaFileServer
    let publication: MediaPublication
    let group: MultiThreadedEventLoopGroup
    private let firstStop = FirstCall()

    /// Writes `size` pattern bytes to `<tmp>/<name>` and publishes it as `contentType` for `host`.
    static func start(size: Int = 300_000, name: String = "movie.mp4", contentType: String = "video/mp4",
                      host: String = "127.0.0.1", limits: MediaFileServer.Limits = MediaFileServer.Limits()) async throws -> MediaServerRig {
        let directory = try makeTemporaryDirectory()
        let contents = pattern(size)
        let file = ServedFile(path: "\(directory)/\(name)", contentType: contentType)
        try write(contents, to: file.path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let server = try await MediaFileServer.start(host: host, limits: limits, group: group, logSystem: LogSystem())
            let publication = try server.publish([name: file], peers: [host])
            return MediaServerRig(directory: directory, name: name, contents: contents, server: server, publication: publication, group: group)
        } catch {
            try? await group.shutdownGracefully()
            removeDirectory(directory, file: name)
            throw error
        }
    }

    /// The request target of the served file, taken from the publication's own URL.
    var target: String { Self.target(of: publication.url(for: name), server: server) }

    /// The path and query of `url` on `server`.
    static func target(of url: String, server: MediaFileServer) -> String {
        let prefix = "http://\(server.host.contains(":") ? "[\(server.host)]" : server.host):\(server.port)"
        #expect(url.hasPrefix(prefix + "/"), "\(url)")
        return String(url.dropFirst(prefix.count))
    }

    /// The published file's token (the first path segment).
    var token: String { String(target.split(separator: "/").first ?? "") }

    func client(source: String? = nil) throws -> RawHTTPClient {
        try RawHTTPClient(host: server.host, port: server.port, source: source)
    }

    /// One request on a fresh connection (`Connection: close`).
    func request(_ method: String, _ target: String? = nil, headers: [String] = [], expectBody: Bool = true,
                 source: String? = nil) throws -> RawHTTPClient.Response {
        let client = try client(source: source)
        defer { client.close() }
        return try client.request(method, target ?? self.target, headers: headers + ["Connection: close"],
                                  expectBody: expectBody)
    }

    /// The server's request history once it holds at least `count` entries (or after 5 s).
    func requests(atLeast count: Int) async -> [ServedRequest] {
        _ = await pollUntil(timeout: 5) { server.requests.count >= count }
        return server.requests
    }

    /// Stops the server and its loop and removes the file. Only the first call does anything (a
    /// test may stop its rig itself, inside ``withMediaServerRig(size:name:contentType:host:limits:_:)``).
    func stop() async throws {
        guard firstStop.claim() else { return }
        await server.stop()
        try await group.shutdownGracefully()
        Self.removeDirectory(directory, file: name)
    }

    // MARK: Files

    /// Bytes that differ from their neighbours and do not repeat every 256 bytes.
    static func pattern(_ size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8 &+ $0 >> 16) }
    }

    static func makeTemporaryDirectory() throws -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/castline-media-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw RawHTTPClient.Failure(description: "mkdtemp: errno \(errno)")
        }
        // The server opens files without following links: the folder's real path.
        guard let real = realpath(made, nil) else { return String(cString: made) }
        defer { free(real) }
        return String(cString: real)
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw RawHTTPClient.Failure(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        var rest = bytes[...]
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw RawHTTPClient.Failure(description: "write \(path): errno \(errno)") }
            rest = rest.dropFirst(written)
        }
    }

    static func removeDirectory(_ directory: String, file: String) {
        unlink("\(directory)/\(file)")
        rmdir(directory)
    }
}

/// Starts a ``MediaServerRig``, runs `body` with it and awaits ``MediaServerRig/stop()``
/// afterwards, also when `body` throws (a failed `#require`).
func withMediaServerRig(size: Int = 300_000, name: String = "movie.mp4", contentType: String = "video/mp4",
                        host: String = "127.0.0.1", limits: MediaFileServer.Limits = MediaFileServer.Limits(),
                        _ body: (MediaServerRig) async throws -> Void) async throws {
    try await withTeardown(try await MediaServerRig.start(size: size, name: name, contentType: contentType, host: host, limits: limits),
                           { try await $0.stop() }, body: body)
}
