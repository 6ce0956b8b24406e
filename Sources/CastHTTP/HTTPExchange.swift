import CastCore
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 request on a short-lived connection of its own, bounded in time and in body
/// size: castline's one HTTP client. The hub's requests (eureka_info, a web page's pre-flight, a
/// failed cast's server probe, a playlist, the start of a media URL) take ``request(_:url:verification:headers:timeout:maximumBody:group:)``'s
/// answer or failure; the simulator's media fetch takes ``exchange(_:url:verification:headers:userAgent:source:timeout:maximumBody:group:)``'s
/// ``Outcome``, which keeps what arrived before a timeout or a close. Any status is an answer
/// (the caller judges it); a `Range` is one of the `headers`.
package enum HTTPExchange {
    package struct Answer: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        /// At most the request's `maximumBody` bytes (HEAD: none).
        package var body: [UInt8]
        /// The DER of the certificate the TLS peer presented (HTTPS).
        package var peerCertificateDER: [UInt8]?
    }

    package enum Failure: Error, Sendable, CustomStringConvertible {
        /// Nothing listens there (ECONNREFUSED).
        case refused(String)
        case failed(String)

        package var description: String {
            switch self {
            case .refused(let why), .failed(let why): return why
            }
        }
    }

    /// How an HTTPS peer's certificate is checked.
    package enum Verification: Sendable {
        /// Against the system's trust store and the host name (a web page).
        case system
        /// Not at all (a Cast device presents its own certificate).
        case none
    }

    /// How an exchange ended, and the answer as far as it came: its head (nil when none arrived)
    /// and the body up to then.
    package struct Outcome: Sendable {
        package enum End: Sendable {
            /// The whole answer, or as much body as was asked for.
            case complete
            /// The deadline passed first.
            case timedOut
            /// The server closed the connection before the answer ended.
            case closed
            /// No connection, or a TLS or protocol error.
            case failed(Failure)
        }

        package var answer: Answer?
        package var end: End
    }

    /// `method` on `url`: the whole answer (its body cut at `maximumBody` bytes), or why there is
    /// none. `timeout`: seconds for the whole exchange, at most 60.
    package static func request(
        _ method: HTTPMethod, url: HTTPURL, verification: Verification = .system, headers: [(String, String)] = [],
        timeout: Double, maximumBody: Int = 65_536, group: EventLoopGroup
    ) async -> Result<Answer, Failure> {
        let outcome = try? await exchange(
            method, url: url, verification: verification, headers: headers,
            timeout: min(max(timeout, 0.001), 60), maximumBody: maximumBody, group: group
        ).get()
        guard let outcome else { return .failure(.failed("the event loop is gone")) }
        switch outcome.end {
        case .complete:
            guard let answer = outcome.answer else { return .failure(.failed("no answer head")) }
            return .success(answer)
        case .timedOut: return .failure(.failed("no answer within \(timeout.formatted) s from \(url.host):\(url.port)"))
        case .closed: return .failure(.failed("the connection closed before the answer ended"))
        case .failed(let failure): return .failure(failure)
        }
    }

    /// `method` `path` on `host`:`port`; `secure`: over TLS.
    package static func request(
        _ method: HTTPMethod, path: String, host: String, port: Int, secure: Bool, verification: Verification = .system,
        headers: [(String, String)] = [], timeout: Double, maximumBody: Int = 65_536, group: EventLoopGroup
    ) async -> Result<Answer, Failure> {
        await request(
            method, url: HTTPURL(secure: secure, host: host, port: port, target: path), verification: verification,
            headers: headers, timeout: timeout, maximumBody: maximumBody, group: group)
    }

    /// The exchange itself. The future always succeeds, with what arrived: an answer's head and
    /// body so far, and how it ended. `source`: the local address to connect from (nil or an
    /// unspecified address: the kernel's choice). `timeout`: seconds for the whole exchange,
    /// connect included (at most an hour). The body is cut at `maximumBody` bytes, and then the
    /// connection is closed.
    package static func exchange(
        _ method: HTTPMethod, url: HTTPURL, verification: Verification = .system, headers extra: [(String, String)] = [],
        userAgent: String = "castline", source: String? = nil, timeout: Double, maximumBody: Int, group: EventLoopGroup
    ) -> EventLoopFuture<Outcome> {
        let loop = group.next()
        let seconds = timeout.isFinite ? min(max(timeout, 0.001), 3600) : 3600
        let deadline = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        var tls: NIOSSLContext?
        if url.secure {
            switch verification == .none ? unverifiedContext : verifiedContext {
            case .success(let context): tls = context
            case .failure(let error): return loop.makeSucceededFuture(Outcome(end: .failed(.failed("cannot create a TLS context: \(error)"))))
            }
        }
        let tlsContext = tls
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.authority)
        headers.add(name: "User-Agent", value: userAgent)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: method, uri: url.target, headers: headers)
        let serverName = verification == .system && !isAddress(url.host) ? url.host : nil
        let host = url.connectHost
        let port = url.port
        let limit = max(0, maximumBody)
        return loop.flatSubmit {
            let state = ExchangeState(promise: loop.makePromise(), limit: limit)
            let bound = NIOLoopBound(state, eventLoop: loop)
            state.timer = loop.scheduleTask(in: deadline) { bound.value.finish(.timedOut) }
            var bootstrap = ClientBootstrap(group: loop)
            if let source, source != "0.0.0.0", source != "::", let local = try? SocketAddress(ipAddress: source, port: 0) {
                bootstrap = bootstrap.bind(to: local)
            }
            bootstrap
                .connectTimeout(deadline)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        if let tlsContext { try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: serverName)) }
                        try sync.addHTTPClientHandlers()
                        try sync.addHandler(ExchangeHandler(state: bound.value, request: request, secure: tlsContext != nil))
                    }
                }
                .connect(host: host, port: port)
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        // Timed out while connecting: nobody reads this channel any more.
                        if bound.value.finished { channel.close(promise: nil) }
                    case .failure(let error):
                        let refused =
                            (error as? NIOConnectionError)?.connectionErrors.contains {
                                ($0.error as? IOError)?.errnoCode == ECONNREFUSED
                            } ?? ((error as? IOError)?.errnoCode == ECONNREFUSED)
                        bound.value.finish(
                            .failed(
                                refused
                                    ? .refused("connection refused by \(host):\(port)")
                                    : .failed("cannot connect to \(host):\(port): \(error)")))
                    }
                }
            return state.promise.futureResult
        }
    }

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    private static let unverifiedContext: Result<NIOSSLContext, Error> = Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        configuration.curves = [.x25519, .secp256r1, .secp384r1]
        return try NIOSSLContext(configuration: configuration)
    }

    private static let verifiedContext: Result<NIOSSLContext, Error> = Result {
        try NIOSSLContext(configuration: TLSConfiguration.makeClientConfiguration())
    }
}

extension HTTPExchange.Outcome {
    init(end: End) {
        self.init(answer: nil, end: end)
    }
}

/// The one exchange in progress: the answer so far and how to end it. Lives on the exchange's loop.
private final class ExchangeState {
    let promise: EventLoopPromise<HTTPExchange.Outcome>
    let limit: Int
    var answer: HTTPExchange.Answer?
    private(set) var finished = false
    var channel: Channel?
    var timer: Scheduled<Void>?

    init(promise: EventLoopPromise<HTTPExchange.Outcome>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    /// Completes the exchange once (later calls do nothing) and closes the connection.
    func finish(_ end: HTTPExchange.Outcome.End) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        channel?.close(promise: nil)
        promise.succeed(HTTPExchange.Outcome(answer: answer, end: end))
    }
}

/// Sends the request when the connection is up and fills the state from the response.
private final class ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let state: ExchangeState
    private let request: HTTPRequestHead
    private let secure: Bool

    init(state: ExchangeState, request: HTTPRequestHead, secure: Bool) {
        self.state = state
        self.request = request
        self.secure = secure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        state.channel = context.channel
        if state.finished { context.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !state.finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Interim responses (100 Continue, 103 Early Hints) are followed by the real one.
            if (100..<200).contains(head.status.code) && head.status.code != 101 { return }
            var certificate: [UInt8]?
            if secure { certificate = try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes() }
            state.answer = HTTPExchange.Answer(status: Int(head.status.code), headers: head.headers, body: [], peerCertificateDER: certificate)
        case .body(let buffer):
            // What fits is kept; the rest of a large body is not needed (headers decide).
            let room = max(0, state.limit - (state.answer?.body.count ?? 0))
            state.answer?.body += buffer.readableBytesView.prefix(room)
            if (state.answer?.body.count ?? 0) >= state.limit { state.finish(.complete) }
        case .end:
            state.finish(state.answer == nil ? .failed(.failed("no answer head")) : .complete)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.finish(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        state.finish(.failed(.failed("\(error)")))
        context.close(promise: nil)
    }
}
