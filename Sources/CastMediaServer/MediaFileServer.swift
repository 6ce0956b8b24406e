import CastProtocol
import CastLogging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server that lets a Cast device fetch local files (`castline cast ./movie.mp4`).
///
/// Each file is published at `http://host:port/<token>/<name>`: the token is 16 random hex digits
/// chosen at start, so only the URLs this server hands out (``url(for:)``) work; every other path
/// is a 404. `GET` and `HEAD` support single byte ranges (206/416), `OPTIONS` answers CORS
/// preflights, and bodies are streamed from disk with sendfile (a 4 GB file is never in memory).
/// Every response carries `Access-Control-Allow-Origin: *` (the receiver is a web page of another origin).
///
/// ```swift
/// let host = try FacingAddress.localAddress(facing: device.host, port: device.port)
/// let server = try await MediaFileServer.start(file: ServedFile(path: "./movie.mp4", contentType: "video/mp4"),
///                                              host: host, group: group, logSystem: logSystem)
/// load(contentId: server.url(for: "movie.mp4"))
/// …
/// await server.stop()
/// ```
///
/// Thread-safe; `Sendable`. Logs under class `MediaFileServer`: start and stop at info, each
/// request at debug, errors at warning.
package final class MediaFileServer: Sendable {
    /// The address the server listens on and puts in URLs.
    package let host: String
    /// The bound port (the one the kernel picked when started with port 0).
    package let port: Int
    /// The random first path segment of every served URL.
    package let token: String
    /// Published name → file.
    package let files: [String: ServedFile]
    /// How many requests ``requests`` keeps.
    package static let requestHistoryLimit = 100

    private let listener: Channel
    private let shared: Shared
    private let log: Logger

    private init(host: String, port: Int, token: String, files: [String: ServedFile], listener: Channel,
                 shared: Shared, log: Logger) {
        self.host = host
        self.port = port
        self.token = token
        self.files = files
        self.listener = listener
        self.shared = shared
        self.log = log
    }

    /// Starts serving `files` (published name → file) on `host`:`port` (0: any free port).
    ///
    /// `host` is a numeric address of this machine, typically
    /// ``FacingAddress/localAddress(facing:port:)`` of the device. Throws when it cannot bind.
    package static func start(files: [String: ServedFile], host: String, port: Int = 0, group: EventLoopGroup,
                             logSystem: LogSystem) async throws -> MediaFileServer {
        let log = Logger(class: "MediaFileServer", system: logSystem)
        let token = randomToken()
        let shared = Shared()
        let configuration = MediaFileServerHandler.Configuration(
            token: token, files: files, fileIO: NonBlockingFileIO(threadPool: .singleton), log: log,
            record: { shared.record($0) })
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                shared.register(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline(withErrorHandling: true)
                    try sync.addHandler(MediaFileServerHandler(configuration: configuration))
                }
            }
            .bind(host: host, port: port)
            .flatMap { $0.addListenerErrorHandler(log: log) }
            .get()
        let server = MediaFileServer(host: host, port: listener.localAddress?.port ?? port, token: token, files: files,
                                     listener: listener, shared: shared, log: log)
        log.info("serving \(files.count) file(s) on \(host):\(server.port)", [
            "host": .string(host), "port": .int(server.port), "files": .string(files.keys.sorted().joined(separator: ", ")),
        ])
        return server
    }

    /// Starts serving one file under its own name (``ServedFile/fileName``).
    package static func start(file: ServedFile, host: String, port: Int = 0, group: EventLoopGroup,
                             logSystem: LogSystem) async throws -> MediaFileServer {
        try await start(files: [file.fileName: file], host: host, port: port, group: group, logSystem: logSystem)
    }

    /// The URL of the file published as `name`: `http://host:port/<token>/<percent-encoded name>`,
    /// IPv6 hosts in brackets (a zone's `%` written `%25`). Built even when no file has that name
    /// (the server then answers 404).
    package func url(for name: String) -> String {
        let urlHost = host.contains(":") ? "[\(host.replacingPercent())]" : host
        return "http://\(urlHost):\(port)/\(token)/\(Self.percentEncoded(name))"
    }

    /// The last ``requestHistoryLimit`` requests answered, oldest first.
    package var requests: [ServedRequest] { shared.state.withLock { $0.requests } }

    /// Stops listening and closes open connections (a device mid-download sees the connection
    /// close). Idempotent.
    package func stop() async {
        let connections = shared.state.withLock { state -> [Channel] in
            state.stopped = true
            defer { state.connections = [:] }
            return Array(state.connections.values)
        }
        try? await listener.close()
        for connection in connections { try? await connection.close() }
        log.info("stopped serving on \(host):\(port)", ["host": .string(host), "port": .int(port)])
    }

    // MARK: Shared state

    /// Request history and open connections, shared with the connection handlers.
    private final class Shared: Sendable {
        struct State {
            var requests: [ServedRequest] = []
            var connections: [ObjectIdentifier: Channel] = [:]
            var stopped = false
        }

        let state = Mutex(State())

        func record(_ request: ServedRequest) {
            state.withLock { state in
                state.requests.append(request)
                if state.requests.count > MediaFileServer.requestHistoryLimit {
                    state.requests.removeFirst(state.requests.count - MediaFileServer.requestHistoryLimit)
                }
            }
        }

        /// Tracks `channel` until it closes; closes it at once when the server has stopped.
        func register(_ channel: Channel) {
            let id = ObjectIdentifier(channel)
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections[id] = channel
                return true
            }
            guard accepted else { return channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in
                self.state.withLock { _ = $0.connections.removeValue(forKey: id) }
            }
        }
    }

    // MARK: Tokens and percent-encoding

    /// 16 lowercase hex digits from the system's cryptographic generator.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// UTF-8 bytes outside RFC 3986 `unreserved` as `%XX` (so `/`, spaces and `%` are escaped).
    static func percentEncoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `%XX` escapes decoded (`+` stays `+`: this is a path); nil for a malformed escape or
    /// bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let high = hexValue(rest[rest.startIndex]),
                  let low = hexValue(rest[rest.startIndex + 1]) else { return nil }
            bytes.append(high << 4 | low)
            rest = rest.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

private extension String {
    /// `%` as `%25` (RFC 6874 zone identifiers inside a URL's brackets).
    func replacingPercent() -> String {
        var out = ""
        for character in self { out += character == "%" ? "%25" : String(character) }
        return out
    }
}
