import CastHTTP
import CastLogging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server that lets Cast devices fetch local files (`castline cast ./movie.mp4`).
///
/// Files are published while a cast needs them (``publish(_:peers:)``) and revoked when it ends
/// (``MediaPublication/revoke()``). Each published file gets its own token, 32 random hex digits,
/// and is reachable at `http://host:port/<token>/<name>` only from the addresses it was published
/// for (the device that was told to fetch it): any other address, a revoked token and every other
/// path get 404. The file is opened once, when it is published, without following links
/// (``OpenedMediaFile``). `GET` and `HEAD` support single byte ranges (206/416), `OPTIONS`
/// answers CORS preflights, and bodies are streamed from disk with sendfile. Every response
/// carries `Access-Control-Allow-Origin: *` (the receiver is a web page of another origin).
///
/// What a client can hold is bounded (``Limits``): connections in all and per address, the time a
/// connection may stay silent, and one response in flight per connection (a pipelining client
/// that does not read its replies is not read from either).
///
/// ```swift
/// let host = try FacingAddress.localAddress(facing: device.host, port: device.port)
/// let server = try await MediaFileServer.start(host: host, group: group, logSystem: logSystem)
/// let published = try server.publish(["movie.mp4": ServedFile(path: "/srv/movie.mp4", contentType: "video/mp4")],
///                                    peers: FacingAddress.addresses(of: device.host))
/// load(contentId: published.url(for: "movie.mp4"))
/// …
/// published.revoke()
/// ```
///
/// Thread-safe; `Sendable`. Logs under class `MediaFileServer`: start, stop, publications and
/// refusals over a bound at info (tokens only at debug), each request at debug.
package final class MediaFileServer: Sendable {
    /// What one client may hold.
    package struct Limits: Sendable, Equatable {
        /// Open connections in all, and from one address; more are closed at once (and counted).
        /// By default a quarter of the descriptor limit, at most 256, 16 per address.
        package var connections = ConnectionGate.Limits.share(of: 0.25, floor: 16, ceiling: 256, perPeer: 16)
        /// Seconds a connection may take to bring its next whole request (silent, or trickling a
        /// header) before it is closed; a response in flight is not bounded (a paused device stops
        /// reading).
        package var idleTimeout: Double = 30
        package init() {}
    }

    /// Refusals over a bound, by kind (`connections`, `connections_per_peer`, `idle`, `peer`): what `/metrics` shows.
    package struct Refusals: Sendable, Equatable {
        package var connections = 0
        package var connectionsPerPeer = 0
        /// Connections closed for bringing no whole request in time.
        package var idle = 0
        /// Requests for a live token from an address it was not published for.
        package var peer = 0
        package init() {}
    }

    /// The address the server listens on and puts in URLs.
    package let host: String
    /// The bound port (the one the kernel picked when started with port 0).
    package let port: Int
    /// How many requests ``requests`` keeps.
    package static let requestHistoryLimit = 100

    private let listener: Channel
    let shared: Shared
    let log: Logger

    private init(host: String, port: Int, listener: Channel, shared: Shared, log: Logger) {
        self.host = host
        self.port = port
        self.listener = listener
        self.shared = shared
        self.log = log
    }

    /// Starts listening on `host`:`port` (0: any free port) with nothing published.
    ///
    /// `host` is a numeric address of this machine, typically
    /// ``FacingAddress/localAddress(facing:port:)`` of the device. Throws when it cannot bind.
    package static func start(host: String, port: Int = 0, limits: Limits = Limits(), group: EventLoopGroup,
                              logSystem: LogSystem) async throws -> MediaFileServer {
        let log = Logger(class: "MediaFileServer", system: logSystem)
        let shared = Shared(gate: ConnectionGate("media server \(host)", limits: limits.connections, log: log))
        let configuration = MediaFileServerHandler.Configuration(shared: shared, threadPool: .singleton, log: log,
                                                                 requestTimeout: .nanoseconds(Int64(limits.idleTimeout * 1e9)))
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard shared.register(channel) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline(withErrorHandling: true)
                    try sync.addHandler(MediaFileServerHandler(configuration: configuration))
                }
            }
            .bind(host: host, port: port)
            .flatMap { $0.addListenerErrorHandler(log: log) }
            .get()
        let server = MediaFileServer(host: host, port: listener.localAddress?.port ?? port, listener: listener, shared: shared, log: log)
        log.info("media server listening on \(host):\(server.port)", ["host": .string(host), "port": .int(server.port)])
        return server
    }

    /// Publishes `files` (published name → file) for `peers` (numeric addresses; those of the
    /// device that will fetch them): each file is opened now (``OpenedMediaFile``) and gets a
    /// token of its own. A name ending in `/` publishes a folder whose plain files are served
    /// under it (`hls/` → `hls/seg00001.m4s`). Throws, with nothing published, when a file cannot
    /// be opened.
    package func publish(_ files: [String: ServedFile], peers: Set<String>, label: String = "") throws(OpenedMediaFile.Failure) -> MediaPublication {
        var opened: [(String, ServedFile, OpenedMediaFile)] = []
        for (name, file) in files.sorted(by: { $0.key < $1.key }) {
            do {
                opened.append((name, file, try OpenedMediaFile.open(file.path, beneath: file.root)))
            } catch {
                for (_, _, open) in opened { open.close() }
                throw error
            }
        }
        var tokens: [String: String] = [:]
        var entries: [String: Shared.Entry] = [:]
        for (name, file, open) in opened {
            let token = Self.randomToken()
            tokens[name] = token
            entries[token] = Shared.Entry(name: name, file: open, contentType: file.contentType, peers: Set(peers.map(Self.normalised)))
            ServedMediaNames.shared.register(token: token, name: file.displayName ?? name)
        }
        shared.add(entries)
        let publication = MediaPublication(server: self, tokens: tokens)
        log.info("publishing \(files.count) file(s) for \(peers.sorted().joined(separator: ", "))\(label.isEmpty ? "" : " (\(label))")", [
            "files": .string(files.keys.sorted().joined(separator: ", ")), "peers": .string(peers.sorted().joined(separator: ",")),
            "port": .int(port),
        ])
        log.debug("publication tokens", ["tokens": .string(tokens.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))])
        return publication
    }

    /// Stops serving the files of `tokens` (their descriptors are closed; requests in flight finish).
    func revoke(_ tokens: [String]) {
        let removed = shared.remove(tokens)
        for entry in removed { entry.file.close() }
        if !removed.isEmpty {
            log.info("no longer serving \(removed.map(\.name).sorted().joined(separator: ", "))", ["files": .int(removed.count)])
        }
    }

    /// The URL of a token's file: `http://host:port/<token>/<percent-encoded name>`, IPv6 hosts
    /// in brackets (a zone's `%` written `%25`).
    func url(token: String, name: String) -> String {
        let urlHost = host.contains(":") ? "[\(host.replacingPercent())]" : host
        let leaf = name.hasSuffix("/") ? String(name.dropLast()) : name
        return "http://\(urlHost):\(port)/\(token)/\(Self.percentEncoded(leaf))"
    }

    /// The last ``requestHistoryLimit`` requests answered, oldest first.
    package var requests: [ServedRequest] { shared.state.withLock { $0.requests } }
    /// The files published now.
    package var publishedCount: Int { shared.state.withLock { $0.entries.count } }
    /// Open connections now.
    package var connectionCount: Int { shared.gate.openCount }
    /// What was refused over a bound since start.
    package var refusals: Refusals {
        var refusals = shared.state.withLock { $0.refusals }
        let gate = shared.gate.refusals
        refusals.connections = gate.total
        refusals.connectionsPerPeer = gate.perPeer
        return refusals
    }

    /// Stops listening, closes open connections (a device mid-download sees the connection close)
    /// and every published file. Idempotent.
    package func stop() async {
        shared.gate.close()
        let (connections, entries) = shared.state.withLock { state -> ([Channel], [Shared.Entry]) in
            state.stopped = true
            defer {
                state.connections = [:]
                state.entries = [:]
            }
            return (Array(state.connections.values), Array(state.entries.values))
        }
        try? await listener.close()
        for connection in connections { try? await connection.close() }
        for entry in entries { entry.file.close() }
        log.info("media server stopped on \(host):\(port)", ["host": .string(host), "port": .int(port)])
    }

    // MARK: Shared state

    /// Publications, request history and open connections, shared with the connection handlers.
    final class Shared: Sendable {
        struct Entry: Sendable {
            let name: String
            let file: OpenedMediaFile
            let contentType: String
            let peers: Set<String>
        }

        struct State {
            var requests: [ServedRequest] = []
            /// Open connections, to close them at stop.
            var connections: [ObjectIdentifier: Channel] = [:]
            var entries: [String: Entry] = [:]
            var refusals = Refusals()
            var stopped = false
        }

        let state = Mutex(State())
        /// The bounds on connections, in all and per address.
        let gate: ConnectionGate

        init(gate: ConnectionGate) {
            self.gate = gate
        }

        func record(_ request: ServedRequest) {
            state.withLock { state in
                state.requests.append(request)
                if state.requests.count > MediaFileServer.requestHistoryLimit {
                    state.requests.removeFirst(state.requests.count - MediaFileServer.requestHistoryLimit)
                }
            }
        }

        func add(_ entries: [String: Entry]) {
            state.withLock { $0.entries.merge(entries) { _, new in new } }
        }

        func remove(_ tokens: [String]) -> [Entry] {
            state.withLock { state in tokens.compactMap { state.entries.removeValue(forKey: $0) } }
        }

        /// The entry of `token` when `peer` may fetch it: `.entry`, `.unknown` (no such token),
        /// or `.wrongPeer` (counted).
        func lookup(_ token: String, peer: String) -> Lookup {
            state.withLock { state in
                guard let entry = state.entries[token] else { return .unknown }
                guard entry.peers.contains(peer) else {
                    state.refusals.peer += 1
                    return .wrongPeer
                }
                return .entry(entry)
            }
        }

        enum Lookup {
            case entry(Entry)
            case unknown
            case wrongPeer
        }

        /// Tracks `channel` until it closes; false when the server has stopped or a connection
        /// bound is reached (the gate closed it and counted it).
        func register(_ channel: Channel) -> Bool {
            guard gate.admit(channel) else { return false }
            let id = ObjectIdentifier(channel)
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections[id] = channel
                return true
            }
            guard accepted else {
                channel.close(promise: nil)
                return false
            }
            channel.closeFuture.whenComplete { _ in
                self.state.withLock { _ = $0.connections.removeValue(forKey: id) }
            }
            return true
        }

        func countIdle() {
            state.withLock { $0.refusals.idle += 1 }
        }

    }

    // MARK: Tokens, addresses and percent-encoding

    /// 32 lowercase hex digits (128 bits) from the system's cryptographic generator.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// An address as compared with a peer's (``ConnectionGate/normalised(_:)``).
    package static func normalised(_ address: String) -> String { ConnectionGate.normalised(address) }

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
