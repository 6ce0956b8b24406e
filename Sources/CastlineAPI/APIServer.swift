import CastCore
import CastHTTP
import CastLogging
import CastlineDaemon
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The control API of `castline run`: HTTP/1.1 with JSON (docs/api/openapi.yaml) on a Unix
/// socket (mode 0660) and, optionally, on TCP, where every request needs the bearer token (and
/// TLS when configured). Bodies over 1 MiB are refused; a connection silent for `readTimeout`
/// (default 30 s) mid-request or between requests is closed. Thread-safe.
package final class APIServer: Sendable {
    package static let maxBodySize = 1 << 20

    /// The Unix socket's path, if it listens on one.
    package let socketPath: String?
    /// The TCP address it listens on (`host:port`, the port the kernel gave for 0), if any.
    package let tcpAddress: String?
    /// The listening channels (the Unix socket's, then TCP's).
    let listeners: [Channel]
    private let gates: (unix: ConnectionGate, tcp: ConnectionGate)
    private let timedOut: Counter
    private let log: Logger

    private init(socketPath: String?, tcpAddress: String?, listeners: [Channel], gates: (unix: ConnectionGate, tcp: ConnectionGate),
                 timedOut: Counter, log: Logger) {
        self.socketPath = socketPath
        self.tcpAddress = tcpAddress
        self.listeners = listeners
        self.gates = gates
        self.timedOut = timedOut
        self.log = log
    }

    /// What the listeners refused: connections over a bound (by listener and bound) and those
    /// closed for bringing no whole request in time, for `/metrics`.
    package var refusals: (socket: ConnectionGate.Refusals, tcp: ConnectionGate.Refusals, requestTimeouts: Int) {
        (gates.unix.refusals, gates.tcp.refusals, timedOut.value)
    }

    /// Open connections now, by listener.
    package var connections: (socket: Int, tcp: Int) { (gates.unix.openCount, gates.tcp.openCount) }

    /// The listeners' figures in the Prometheus text format.
    static func metricsText(unix: ConnectionGate, tcp: ConnectionGate, timedOut: Counter, unauthorized: Counter) -> String {
        let (u, t) = (unix.refusals, tcp.refusals)
        return HubMetrics.families(
            gauges: [HubMetrics.Gauge("castline_api_connections", "Open connections to the control API, by listener.",
                                      [([("listener", "socket")], Double(unix.openCount)), ([("listener", "tcp")], Double(tcp.openCount))])],
            counters: [HubMetrics.Gauge("castline_api_refused_total",
                                        "Control API connections closed: over the total or per-address bound as accepted, for bringing no whole request in time, or without a valid token (401 at the request's head).",
                                        [([("listener", "socket"), ("reason", "connections")], Double(u.total)),
                                         ([("listener", "tcp"), ("reason", "connections")], Double(t.total)),
                                         ([("listener", "tcp"), ("reason", "connections_per_peer")], Double(t.perPeer)),
                                         ([("listener", "any"), ("reason", "request_timeout")], Double(timedOut.value)),
                                         ([("listener", "tcp"), ("reason", "unauthorized")], Double(unauthorized.value))])])
    }

    package struct StartError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts listening. `listen` is `host:port`; over it `token` is required and `tls`, when
    /// given, wraps every connection.
    package static func start(plane: ControlPlane, events: HubEvents, metrics: @escaping @Sendable () async -> String,
                             socket: String?, listen: String?, token: APIToken?, tls: NIOSSLContext?, readTimeout: Double = 30,
                             group: EventLoopGroup, logSystem: LogSystem) async throws(StartError) -> APIServer {
        let timeout = TimeAmount.milliseconds(Int64(min(max(readTimeout, 0.1), 3600) * 1000))
        let log = Logger(class: "APIServer", system: logSystem)
        let timedOut = Counter(), unauthorized = Counter()
        // Each listener's share of the descriptors (a quarter for TCP, an eighth for the socket's
        // local users), so clients together cannot take those of device sessions.
        let unixGate = ConnectionGate("API socket", limits: .share(of: 0.125, floor: 8, ceiling: 128, perPeer: 128), log: log)
        let tcpGate = ConnectionGate("API (TCP)", limits: .share(of: 0.25, floor: 16, ceiling: 256, perPeer: 16), log: log)
        // /metrics: the hub's figures, then the listeners' own.
        let hubMetrics = metrics
        let metrics: @Sendable () async -> String = {
            await hubMetrics() + Self.metricsText(unix: unixGate, tcp: tcpGate, timedOut: timedOut, unauthorized: unauthorized)
        }
        let base = APIHandler.Context(plane: plane, events: events, metrics: metrics, token: nil, log: log, requestTimeout: timeout,
                                      timedOut: { timedOut.add() }, unauthorized: { unauthorized.add() })
        var listeners: [Channel] = []
        var tcpAddress: String?
        do {
            if let socket {
                try prepareSocketPath(socket)
                let channel = try await bootstrap(group: group, context: base, tls: nil, readTimeout: timeout, gate: unixGate).bind(unixDomainSocketPath: socket)
                    .flatMap { $0.addListenerErrorHandler(log: log) }.get()
                chmod(socket, 0o660)
                listeners.append(channel)
                log.info("API listening on \(socket) (mode 0660)", ["socket": .string(socket)])
            }
            if let listen {
                guard let token else { throw StartError(description: "api.listen needs api.token_file") }
                let colon = listen.lastIndex(of: ":")!
                var host = String(listen[..<colon])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                let port = Int(listen[listen.index(after: colon)...]) ?? 0
                let context = APIHandler.Context(plane: plane, events: events, metrics: metrics, token: token, log: log, requestTimeout: timeout,
                                                 timedOut: { timedOut.add() }, unauthorized: { unauthorized.add() })
                let channel = try await bootstrap(group: group, context: context, tls: tls, readTimeout: timeout, gate: tcpGate).bind(host: host, port: port)
                    .flatMap { $0.addListenerErrorHandler(log: log) }.get()
                let bound = channel.localAddress?.port ?? port
                tcpAddress = HostPort.name(host: host, port: bound)
                listeners.append(channel)
                log.info("API listening on \(tcpAddress!) (bearer token\(tls == nil ? "" : ", TLS"))", ["listen": .string(tcpAddress!)])
            }
        } catch let error as StartError {
            for channel in listeners { try? await channel.close().get() }
            throw error
        } catch {
            for channel in listeners { try? await channel.close().get() }
            throw StartError(description: "cannot listen on \(listen ?? socket ?? "?"): \(error)")
        }
        return APIServer(socketPath: socket, tcpAddress: tcpAddress, listeners: listeners, gates: (unixGate, tcpGate),
                         timedOut: timedOut, log: log)
    }

    private static func bootstrap(group: EventLoopGroup, context: APIHandler.Context, tls: NIOSSLContext?,
                                  readTimeout: TimeAmount, gate: ConnectionGate) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard gate.admit(channel) else { return channel.eventLoop.makeSucceededVoidFuture() }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
                    try sync.addHandler(IdleStateHandler(readTimeout: readTimeout))
                    try sync.configureHTTPServerPipeline(withErrorHandling: true)
                    try sync.addHandler(APIHandler(context: context))
                }
            }
    }

    /// The socket's folder exists (created 0750 when missing), and no live server holds the
    /// path: a stale socket file (a castline that crashed) is removed; a live one is an error.
    static func prepareSocketPath(_ path: String) throws(StartError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !folder.isEmpty, access(folder, F_OK) != 0, mkdir(folder, 0o750) != 0 {
            throw StartError(description: "cannot create \(folder) for the API socket: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw StartError(description: "\(path) exists and is not a socket; remove it or set api.socket")
        }
        if SocketProbe.answers(path) {
            throw StartError(description: "another castline run already listens on \(path)")
        }
        unlink(path)
    }

    /// Stops listening (open connections close with the event loops) and removes the socket file.
    package func stop() async {
        for channel in listeners { try? await channel.close().get() }
        if let socketPath { unlink(socketPath) }
    }
}

/// A count shared by a listener's connections.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
