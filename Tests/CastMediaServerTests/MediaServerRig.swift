import CastLogging
import CastMediaServer
import CastTestSupport
import Glibc
import NIOCore
import NIOPosix
import Testing

/// A ``MediaFileServer`` on 127.0.0.1 (port 0) serving one temporary file of a known pattern,
/// with helpers to talk to it over raw sockets and to clean up.
struct MediaServerRig {
    let directory: String
    let name: String
    let contents: [UInt8]
    let server: MediaFileServer
    let group: MultiThreadedEventLoopGroup
    private let firstStop = FirstCall()

    /// Writes `size` pattern bytes to `<tmp>/<name>` and serves it as `contentType`.
    static func start(size: Int = 300_000, name: String = "movie.mp4", contentType: String = "video/mp4",
                      host: String = "127.0.0.1") async throws -> MediaServerRig {
        let directory = try makeTemporaryDirectory()
        let contents = pattern(size)
        let file = ServedFile(path: "\(directory)/\(name)", contentType: contentType)
        try write(contents, to: file.path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let server = try await MediaFileServer.start(file: file, host: host, group: group, logSystem: LogSystem())
            return MediaServerRig(directory: directory, name: name, contents: contents, server: server, group: group)
        } catch {
            try? await group.shutdownGracefully()
            removeDirectory(directory, file: name)
            throw error
        }
    }

    /// The request target of the served file, taken from the server's own URL.
    var target: String {
        let url = server.url(for: name)
        let prefix = "http://\(server.host.contains(":") ? "[\(server.host)]" : server.host):\(server.port)"
        #expect(url.hasPrefix(prefix + "/"), "\(url)")
        return String(url.dropFirst(prefix.count))
    }

    func client() throws -> RawHTTPClient {
        try RawHTTPClient(host: server.host, port: server.port)
    }

    /// One request on a fresh connection (`Connection: close`).
    func request(_ method: String, _ target: String? = nil, headers: [String] = [], expectBody: Bool = true) throws
        -> RawHTTPClient.Response {
        let client = try client()
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
    /// test may stop its rig itself, inside ``withMediaServerRig(size:name:contentType:host:_:)``).
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
        return String(cString: made)
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
                        host: String = "127.0.0.1", _ body: (MediaServerRig) async throws -> Void) async throws {
    try await withTeardown(try await MediaServerRig.start(size: size, name: name, contentType: contentType, host: host),
                           { try await $0.stop() }, body: body)
}
