import CastCore
import CastProtocol
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SystemCrypto

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP(S) request on a short-lived connection of its own, bounded in time and in body
/// size: the client side of eureka_info and of a web page's pre-flight. Any status is an answer
/// (the caller judges it); a connection that fails or a deadline that passes is a failure.
public enum HTTPExchange {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        /// At most the request's `maximumBody` bytes (HEAD: none).
        public var body: [UInt8]
        /// The TLS peer certificate's common name (HTTPS).
        public var peerCommonName: String?
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// Nothing listens there (ECONNREFUSED).
        case refused(String)
        case failed(String)

        public var description: String {
            switch self {
            case .refused(let why), .failed(let why): return why
            }
        }
    }

    /// How an HTTPS peer's certificate is checked.
    public enum Verification: Sendable {
        /// Against the system's trust store and the host name (a web page).
        case system
        /// Not at all (a Cast device presents its own certificate).
        case none
    }

    /// `method` `path` on `host`:`port`; `secure`: over TLS.
    public static func request(
        _ method: HTTPMethod, path: String, host: String, port: Int, secure: Bool, verification: Verification = .system,
        headers extra: [(String, String)] = [], timeout: Double, maximumBody: Int = 65_536, group: EventLoopGroup
    ) async -> Result<Answer, Failure> {
        let loop = group.next()
        let deadline = TimeAmount.nanoseconds(Int64(min(max(timeout, 0.001), 60) * 1_000_000_000))
        var tls: NIOSSLContext?
        if secure {
            switch verification == .none ? unverifiedContext : verifiedContext {
            case .success(let context): tls = context
            case .failure(let error): return .failure(.failed("cannot create a TLS context: \(error)"))
            }
        }
        let promise = loop.makePromise(of: Answer.self)
        let tlsContext = tls
        let timer = loop.scheduleTask(in: deadline) {
            promise.fail(Failure.failed("no answer within \(timeout.formatted) s from \(host):\(port)"))
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        headers.add(name: "User-Agent", value: "castline")
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
        let serverName = verification == .system && !Self.isAddress(host) ? host : nil
        let connecting = ClientBootstrap(group: loop)
            .connectTimeout(deadline)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tlsContext { try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: serverName)) }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(HTTPExchangeHandler(request: head, promise: promise, secure: secure, maximumBody: maximumBody))
                }
            }
            .connect(host: host, port: port)
        connecting.whenComplete { result in
            switch result {
            case .success(let channel):
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
            case .failure(let error):
                let refused = (error as? NIOConnectionError)?.connectionErrors.contains {
                    ($0.error as? IOError)?.errnoCode == ECONNREFUSED
                } ?? ((error as? IOError)?.errnoCode == ECONNREFUSED)
                let reason = refused ? "connection refused by \(host):\(port)" : "cannot connect to \(host):\(port): \(error)"
                promise.fail(refused ? Failure.refused(reason) : Failure.failed(reason))
            }
        }
        defer { timer.cancel() }
        do {
            return .success(try await promise.futureResult.get())
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
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

/// Sends the request when the channel is active and completes the promise with the answer.
/// Runs on the channel's loop.
private final class HTTPExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let request: HTTPRequestHead
    private let promise: EventLoopPromise<HTTPExchange.Answer>
    private let secure: Bool
    private let maximumBody: Int
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(request: HTTPRequestHead, promise: EventLoopPromise<HTTPExchange.Answer>, secure: Bool, maximumBody: Int) {
        self.request = request
        self.promise = promise
        self.secure = secure
        self.maximumBody = maximumBody
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
        case .body(var buffer):
            // What fits is kept; the rest of a large body is not needed (headers decide).
            let room = max(0, maximumBody - body.count)
            body += buffer.readBytes(length: min(room, buffer.readableBytes)) ?? []
            if body.count >= maximumBody { finish(context) }
        case .end:
            finish(context)
        }
    }

    private func finish(_ context: ChannelHandlerContext) {
        guard let head else {
            promise.fail(HTTPExchange.Failure.failed("no answer head"))
            return
        }
        var commonName: String?
        if secure, let der = try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes() {
            commonName = (try? Certificate(derBytes: der))?.commonName
        }
        promise.succeed(HTTPExchange.Answer(status: Int(head.status.code), headers: head.headers, body: body, peerCommonName: commonName))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(HTTPExchange.Failure.failed("the connection closed before the answer ended"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        promise.fail(HTTPExchange.Failure.failed("\(error)"))
        context.close(promise: nil)
    }
}

/// An http(s) URL taken apart for ``HTTPExchange``: scheme, host (IPv6 without brackets), port
/// (the scheme's default when absent) and the request target (path and query, `/` when empty).
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    public var secure: Bool
    public var host: String
    public var port: Int
    public var target: String

    /// nil for anything that is not an http(s) URL with a host (and a valid port). A URL is
    /// printable ASCII (an international name comes punycoded, other bytes percent-encoded).
    public init?(_ text: String) {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { secure = true; rest = text.dropFirst(8) }
        else if lower.hasPrefix("http://") { secure = false; rest = text.dropFirst(7) }
        else { return nil }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var target = String(rest[authorityEnd...])
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        self.target = target
        let defaultPort = secure ? 443 : 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty { port = defaultPort } else {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65_535).contains(p) else { return nil }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(p) else { return nil }
            port = p
        } else {
            host = String(authority)
            port = defaultPort
        }
        let hostCharacters = host.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
                || c == 0x25 || c == 0x3A
        }
        guard !host.isEmpty, hostCharacters, host.contains(":") == authority.hasPrefix("[") else { return nil }
    }

    /// The URL `location` (a redirect's Location header) names, relative to this one.
    public func resolving(_ location: String) -> HTTPURL? {
        if let absolute = HTTPURL(location) { return absolute }
        var next = self
        if location.hasPrefix("//") { return HTTPURL((secure ? "https:" : "http:") + location) }
        if location.hasPrefix("/") {
            next.target = location
        } else {
            let base = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
            next.target = String(base[...(base.lastIndex(of: "/") ?? base.startIndex)]) + location
        }
        return next
    }

    public var description: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let portPart = port == (secure ? 443 : 80) ? "" : ":\(port)"
        return "\(secure ? "https" : "http")://\(bracketed)\(portPart)\(target)"
    }
}

extension HTTPExchange {
    /// `method` on `url`.
    public static func request(
        _ method: HTTPMethod, url: HTTPURL, verification: Verification = .system, headers: [(String, String)] = [],
        timeout: Double, maximumBody: Int = 65_536, group: EventLoopGroup
    ) async -> Result<Answer, Failure> {
        await request(method, path: url.target, host: url.host, port: url.port, secure: url.secure, verification: verification,
                      headers: headers, timeout: timeout, maximumBody: maximumBody, group: group)
    }
}
