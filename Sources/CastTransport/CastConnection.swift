import CastCore
import CastDeviceAuth
import CastListening
import CastLogging
import CastProtocol
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import SystemCrypto

/// One CASTV2 connection to a device: TCP + TLS (the device's self-signed certificate is not
/// checked by TLS; trust comes from device authentication), the Cast codec with its traffic log,
/// the heartbeat (PONG to PINGs, PING when the device is silent, close on timeout) and an
/// optional device-auth challenge. Every other inbound message arrives on ``messages`` in order.
///
/// Thread-safe. The connection ends once: by ``close()``, by the device, by heartbeat timeout or
/// by an error; ``messages`` then finishes and ``closeReason`` says which. ``messages`` is
/// single-use: cancelling the task that reads it closes the connection (nobody would read the
/// replies), and so does releasing the connection without ``close()``.
public final class CastConnection: Sendable {
    /// `host:port`, as in logs and errors.
    public let endpoint: String
    /// The DER of the certificate the device presented.
    public let peerCertificateDER: [UInt8]
    /// What device authentication found.
    public let deviceAuth: DeviceAuthResult
    /// Inbound messages except heartbeats (and the device-auth reply consumed by ``connect``).
    public let messages: AsyncStream<CastMessage>

    private let channel: Channel
    private let bridge: NIOLoopBound<InboundBridge>
    private let closed: EventLoopFuture<CastConnectionCloseReason>
    /// The close reason once known, so asking later never touches the event loop (which may be
    /// shut down by then).
    private let knownCloseReason = Mutex<CastConnectionCloseReason?>(nil)
    private let log: Logger

    private init(endpoint: String, peerCertificateDER: [UInt8], deviceAuth: DeviceAuthResult, messages: AsyncStream<CastMessage>,
                 channel: Channel, bridge: NIOLoopBound<InboundBridge>, closed: EventLoopFuture<CastConnectionCloseReason>, log: Logger) {
        self.endpoint = endpoint
        self.peerCertificateDER = peerCertificateDER
        self.deviceAuth = deviceAuth
        self.messages = messages
        self.channel = channel
        self.bridge = bridge
        self.closed = closed
        self.log = log
        closed.whenSuccess { [weak self] reason in self?.knownCloseReason.withLock { $0 = reason } }
    }

    /// `host:port`, an IPv6 host in brackets: how a device is named in logs and errors.
    public static func endpointName(host: String, port: Int) -> String {
        // A byte test: `contains(":")` with a string argument is Foundation's CFString search here.
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Connects, completes TLS and, unless ``CastConnectionOptions/deviceAuth`` is `.off`,
    /// authenticates the device. Each step is bounded by ``CastConnectionOptions/connectTimeout``.
    /// `attempt`: lets the caller give the connect up (``CastConnectAttempt/cancel()``); it then
    /// throws ``CastTransportError/cancelled(endpoint:)`` without waiting for a timeout.
    public static func connect(host: String, port: Int, options: CastConnectionOptions = .init(),
                               group: EventLoopGroup, attempt: CastConnectAttempt? = nil)
        async throws(CastTransportError) -> CastConnection {
        let endpoint = endpointName(host: host, port: port)
        if attempt?.isCancelled == true { throw .cancelled(endpoint: endpoint) }
        let log = Logger(class: "CastConnection", system: options.logSystem).with(["device": .string(endpoint)])
        let tls: NIOSSLContext
        switch sharedTLSContext {
        case .success(let context): tls = context
        case .failure(let error): throw .tlsFailed(endpoint: endpoint, reason: "cannot create a TLS context: \(error)")
        }
        let loop = group.next()
        let handshake = loop.makePromise(of: [UInt8].self)
        let closedPromise = loop.makePromise(of: CastConnectionCloseReason.self)
        let (messages, continuation) = AsyncStream.makeStream(of: CastMessage.self)
        let timeout = TimeAmount.seconds(clamping: max(0.001, min(options.connectTimeout, 3600)))
        let started = MonotonicClock.seconds()

        // Handlers go in after TCP connects: `connect(host:)` may race several addresses (Happy
        // Eyeballs) and the losers must not touch this connection's promises and stream. Nothing
        // arrives before our ClientHello, so nothing is missed.
        let channel: Channel
        do {
            var bootstrap = ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            if let attempt {
                // Each socket as it is created, so a cancel closes one still connecting too.
                bootstrap = bootstrap.channelInitializer { channel in
                    attempt.adopt(channel)
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
            }
            if let address = ipLiteralAddress(host: host, port: port) {
                // An address needs no resolver: `connect(host:)` would still hand it to
                // getaddrinfo on a Dispatch thread and run Happy Eyeballs' timers around it.
                channel = try await bootstrap.connect(to: address).get()
            } else {
                channel = try await bootstrap.connect(host: host, port: port).get()
            }
        } catch {
            handshake.fail(error)
            closedPromise.succeed(.error("\(error)"))
            continuation.finish()
            let reason = connectFailureReason(error)
            if attempt?.isCancelled == true {
                log.debug("connect cancelled", ["reason": .string(reason)])
                throw .cancelled(endpoint: endpoint)
            }
            log.warning("cannot connect: \(reason)", ["reason": .string(reason)])
            throw .connectFailed(endpoint: endpoint, reason: reason)
        }
        let bound: NIOLoopBound<InboundBridge>
        do {
            bound = try await loop.submit {
                // Closed since TCP connected (a cancel, a peer that closes at once): handlers added
                // now would never see the channel go inactive, and their promises would wait.
                guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                let inbound = InboundBridge(continuation: continuation, closed: closedPromise, log: log)
                let sync = channel.pipeline.syncOperations
                // The first request (or the device-auth challenge) leaves with the TLS Finished.
                let coalescer = HandshakeFlushCoalescer()
                try sync.addHandler(coalescer)
                try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil))
                try sync.addHandler(TLSHandshakeWaiter(promise: handshake, coalescer: coalescer))
                try sync.addCastMessageCodec(logSystem: options.logSystem)
                try sync.addHandler(CastHeartbeatHandler(pingInterval: options.heartbeatInterval, timeout: options.heartbeatTimeout,
                                                         senderID: options.senderID, logSystem: options.logSystem))
                try sync.addHandler(inbound)
                return NIOLoopBound(inbound, eventLoop: loop)
            }.get()
        } catch {
            handshake.fail(error)
            closedPromise.succeed(.error("\(error)"))
            continuation.finish()
            channel.close(promise: nil)
            if attempt?.isCancelled == true { throw .cancelled(endpoint: endpoint) }
            throw .connectFailed(endpoint: endpoint, reason: "the connection closed while it was being set up: \(error)")
        }
        // Whoever stops reading the messages ends the connection (nothing would read the replies).
        continuation.onTermination = { termination in
            if case .cancelled = termination { channel.close(promise: nil) }
        }

        // TLS, bounded by the same timeout.
        let handshakeTimer = loop.scheduleTask(in: timeout) {
            handshake.fail(CastTransportError.tlsFailed(endpoint: endpoint, reason: "no handshake within \(options.connectTimeout) s"))
        }
        let peer: [UInt8]
        do {
            peer = try await handshake.futureResult.get()
            handshakeTimer.cancel()
        } catch {
            handshakeTimer.cancel()
            await closeLocally(channel, bound)
            if attempt?.isCancelled == true {
                log.debug("connect cancelled during the TLS handshake")
                throw .cancelled(endpoint: endpoint)
            }
            log.warning("TLS handshake failed: \(error)", ["reason": .string("\(error)")])
            if let error = error as? CastTransportError { throw error }
            throw .tlsFailed(endpoint: endpoint, reason: "\(error)")
        }
        let bridge = bound

        var auth = DeviceAuthResult.notChecked
        var unanswered = false
        if options.deviceAuth != .off {
            (auth, unanswered) = await authenticate(channel: channel, bridge: bridge, peer: peer, options: options, timeout: timeout)
            if attempt?.isCancelled == true {
                await closeLocally(channel, bridge)
                log.debug("connect cancelled during device authentication")
                throw .cancelled(endpoint: endpoint)
            }
            switch (auth, options.deviceAuth) {
            case (.failed(let reason), .require) where unanswered:
                log.error("device authentication got no answer: \(reason); closing", ["reason": .string(reason)])
                await closeLocally(channel, bridge)
                throw .deviceAuthUnanswered(endpoint: endpoint, reason: reason)
            case (.failed(let reason), .require):
                log.error("device authentication failed: \(reason); closing", ["reason": .string(reason)])
                await closeLocally(channel, bridge)
                throw .deviceAuthFailed(endpoint: endpoint, reason: reason)
            case (.failed(let reason), _):
                log.warning("device authentication failed: \(reason); going on (deviceAuth: warn)", ["reason": .string(reason)])
            case (.verified(let name, let audioOnly), _):
                log.info("device authenticated: \(name ?? "?")\(audioOnly ? " (audio-only device)" : "")", [
                    "deviceCertificate": .string(name ?? ""), "audioOnly": .bool(audioOnly),
                ])
            case (.notChecked, _):
                break
            }
        }
        if attempt?.isCancelled == true {
            await closeLocally(channel, bridge)
            log.debug("connect cancelled after the handshake")
            throw .cancelled(endpoint: endpoint)
        }
        // Parsing the certificate costs more than the rest of this line: only when it is logged.
        if log.isEnabled(.info) {
            let commonName = (try? Certificate(derBytes: peer))?.commonName ?? "?"
            log.info("connected to \(endpoint) in \(Int((MonotonicClock.seconds() - started) * 1000)) ms (TLS peer \(commonName))", [
                "peerCertificate": .string(commonName),
            ])
        }
        return CastConnection(endpoint: endpoint, peerCertificateDER: peer, deviceAuth: auth, messages: messages,
                              channel: channel, bridge: bridge, closed: closedPromise.futureResult, log: log)
    }

    /// The client TLS context every connection shares: the configuration never varies, and
    /// building a context (BoringSSL SSL_CTX, trust settings) for each connection cost more than
    /// the connection's own SSL object. Created on first use; a failure is kept and reported to
    /// every connect.
    private static let sharedTLSContext: Result<NIOSSLContext, Error> = Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        // Classic ECDHE only: Cast devices do not negotiate post-quantum hybrids, and
        // BoringSSL's default X25519MLKEM768 key share was most of a handshake's CPU.
        configuration.curves = [.x25519, .secp256r1, .secp384r1]
        return try NIOSSLContext(configuration: configuration)
    }

    /// Why a connect failed, as logs and errors say it: the error, and for a descriptor shortage
    /// (a fleet past `ulimit -n`) what to raise.
    static func connectFailureReason(_ error: any Error) -> String {
        DescriptorShortage.hint(for: error).map { "\(error) (\($0))" } ?? "\(error)"
    }

    /// `host` as a socket address when it is an IPv4 or IPv6 literal (brackets allowed), else nil
    /// (`SocketAddress(ipAddress:)` parses with inet_pton and never resolves a name).
    static func ipLiteralAddress(host: String, port: Int) -> SocketAddress? {
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        return try? SocketAddress(ipAddress: String(literal), port: port)
    }

    /// Sends a challenge with a fresh nonce and checks the reply against `options.trustAnchors`.
    /// `unanswered`: no reply in time, or the device closed instead of answering.
    private static func authenticate(channel: Channel, bridge: NIOLoopBound<InboundBridge>, peer: [UInt8],
                                     options: CastConnectionOptions, timeout: TimeAmount) async -> (DeviceAuthResult, unanswered: Bool) {
        guard !options.trustAnchors.isEmpty else { return (.failed(reason: "no trust anchors configured"), false) }
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let loop = channel.eventLoop
        let reply = loop.makePromise(of: [UInt8].self)
        let timer = loop.scheduleTask(in: timeout) { bridge.value.cancelDeviceAuth(ChannelError.connectTimeout(timeout)) }
        loop.execute { bridge.value.awaitDeviceAuth(reply, channelActive: channel.isActive) }
        let challenge = CastMessage(sourceID: options.senderID, destinationID: EndpointID.receiver0.rawValue,
                                    namespace: .deviceAuth, payload: .binary(DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256)))
        channel.writeAndFlush(challenge, promise: nil)
        let bytes: [UInt8]
        do { bytes = try await reply.futureResult.get() } catch {
            timer.cancel()
            switch error {
            case ChannelError.connectTimeout: return (.failed(reason: "no reply within \(options.connectTimeout) s"), true)
            case ChannelError.eof: return (.failed(reason: "the device closed the connection instead of answering"), true)
            default: return (.failed(reason: "\(error)"), false)
            }
        }
        timer.cancel()
        do {
            let verified = try DeviceAuthVerifier(trustAnchors: options.trustAnchors)
                .verify(reply: bytes, peerCertificateDER: peer, expectedNonce: nonce)
            return (.verified(deviceCommonName: verified.deviceCertificate.commonName, audioOnly: verified.audioOnly), false)
        } catch {
            return (.failed(reason: "\(error)"), false)
        }
    }

    /// Writes one message. Throws ``CastTransportError/closed(endpoint:reason:)`` once the
    /// connection has ended, ``CastTransportError/sendFailed(endpoint:reason:)`` otherwise.
    public func send(_ message: CastMessage) async throws(CastTransportError) {
        do {
            try await channel.writeAndFlush(message).get()
        } catch {
            if !channel.isActive { throw .closed(endpoint: endpoint, reason: await closeReason) }
            throw .sendFailed(endpoint: endpoint, reason: "\(error)")
        }
    }

    /// Queues one message and returns at once: messages queued one after another from one
    /// thread or actor go out in that order. `completion` (optional) gets nil once written, or
    /// the error (``CastTransportError/closed(endpoint:reason:)`` with `.error` when the
    /// connection had ended, ``CastTransportError/sendFailed(endpoint:reason:)`` otherwise).
    ///
    /// `flush: false` leaves the message for the next flushed one (``send(_:)`` or `enqueue`),
    /// so both leave in one TLS write and one syscall. Only for a message that is always
    /// followed by another, such as a CONNECT before the first request on it.
    public func enqueue(_ message: CastMessage, flush: Bool = true, completion: (@Sendable (CastTransportError?) -> Void)? = nil) {
        let channel = self.channel
        guard let completion else {
            if flush { channel.writeAndFlush(message, promise: nil) } else { channel.write(message, promise: nil) }
            return
        }
        let endpoint = self.endpoint
        (flush ? channel.writeAndFlush(message) : channel.write(message)).whenComplete { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error):
                completion(channel.isActive ? .sendFailed(endpoint: endpoint, reason: "\(error)")
                                            : .closed(endpoint: endpoint, reason: .error("\(error)")))
            }
        }
    }

    /// Closes the connection (idempotent); ``closeReason`` becomes `.local` unless it had already ended.
    public func close() async {
        await Self.closeLocally(channel, bridge)
        _ = await closeReason
    }

    /// Marks the close as ours (so late errors do not rename it) and closes.
    private static func closeLocally(_ channel: Channel, _ bridge: NIOLoopBound<InboundBridge>) async {
        try? await channel.eventLoop.submit { bridge.value.closingLocally = true }.get()
        try? await channel.close().get()
    }

    /// Starts closing without waiting (for owners that cannot await, e.g. in `deinit`).
    public func closeSoon() {
        if channel.isActive { channel.close(promise: nil) }
    }

    deinit {
        // A connection dropped without close() must not keep its socket and heartbeat alive.
        // (Only while open: after the event loops have shut down there is nothing to close.)
        closeSoon()
    }

    /// Waits until the connection has ended and says how.
    public var closeReason: CastConnectionCloseReason {
        get async {
            if let known = knownCloseReason.withLock({ $0 }) { return known }
            return (try? await closed.get()) ?? .error("unknown")
        }
    }

    /// Whether the connection is still open.
    public var isActive: Bool { channel.isActive }
}

/// The last handler: messages into the stream, the device-auth reply to whoever waits for it,
/// and the reason the connection ended. Loop-confined.
final class InboundBridge: ChannelInboundHandler {
    typealias InboundIn = CastMessage

    private let continuation: AsyncStream<CastMessage>.Continuation
    private let closed: EventLoopPromise<CastConnectionCloseReason>
    private let log: Logger
    private var reason: CastConnectionCloseReason?
    private var pendingAuth: EventLoopPromise<[UInt8]>?
    var closingLocally = false

    init(continuation: AsyncStream<CastMessage>.Continuation, closed: EventLoopPromise<CastConnectionCloseReason>, log: Logger) {
        self.continuation = continuation
        self.closed = closed
        self.log = log
    }

    func awaitDeviceAuth(_ promise: EventLoopPromise<[UInt8]>, channelActive: Bool) {
        guard channelActive else {
            promise.fail(ChannelError.eof)
            return
        }
        pendingAuth = promise
    }

    /// Gives up waiting for the device-auth reply (a later one is then an ordinary message).
    func cancelDeviceAuth(_ error: Error) {
        pendingAuth?.fail(error)
        pendingAuth = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        if message.namespace == .deviceAuth, let pending = pendingAuth {
            pendingAuth = nil
            guard case .binary(let bytes) = message.payload else {
                pending.fail(DeviceAuthError.malformedReply("text payload on the deviceauth namespace"))
                return
            }
            pending.succeed(bytes)
            return
        }
        continuation.yield(message)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // Once we close, what follows (resets, TLS shutdown errors, a heartbeat timeout during
        // the close_notify wait) does not change why the connection ended.
        guard !closingLocally else { return }
        switch error {
        case let timeout as CastHeartbeatTimeout:
            reason = reason ?? .heartbeatTimeout(silentFor: timeout.silentFor)
        case NIOSSLError.uncleanShutdown:
            break   // the device closed TCP without close_notify: an ordinary remote close
        case is CastMessageDecodingError:
            break   // one bad frame body, already logged by the codec; the connection goes on
        default:
            reason = reason ?? .error("\(error)")
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let ended = reason ?? (closingLocally ? .local : .remoteClosed)
        switch ended {
        case .local: log.info("connection closed by us")
        case .remoteClosed: log.warning("connection closed by the device")
        default: log.warning("connection lost: \(ended)", ["reason": .string("\(ended)")])
        }
        pendingAuth?.fail(ChannelError.eof)
        pendingAuth = nil
        continuation.finish()
        closed.succeed(ended)
        context.fireChannelInactive()
    }
}
