import CastCore
import CastDeviceAuth
import CastHTTP
import CastProtocol
import CastLogging
import NIOCore
import NIOPosix
import NIOSSL
import SystemCrypto

/// Connecting: the socket, the pipeline, the TLS handshake, device authentication.
extension CastConnection {
    /// Connects, completes TLS and, unless ``CastConnectionOptions/deviceAuth`` is `.off`,
    /// authenticates the device. Each step is bounded by ``CastConnectionOptions/connectTimeout``.
    /// `attempt`: lets the caller give the connect up (``CastConnectAttempt/cancel()``); it then
    /// throws ``CastTransportError/cancelled(endpoint:)`` without waiting for a timeout.
    package static func connect(host: String, port: Int, options: CastConnectionOptions = .init(),
                               group: EventLoopGroup, attempt: CastConnectAttempt? = nil)
        async throws(CastTransportError) -> CastConnection {
        let endpoint = HostPort.name(host: host, port: port)
        if attempt?.isCancelled == true { throw .cancelled(endpoint: endpoint) }
        let log = Logger(class: "CastConnection", system: options.logSystem).with(["device": .string(endpoint)])
        let step = ConnectStep(endpoint: endpoint, options: options, attempt: attempt, log: log,
                               timeout: .seconds(clamping: max(0.001, min(options.connectTimeout, 3600))))
        let started = MonotonicClock.seconds()
        let tls: NIOSSLContext
        switch sharedTLSContext {
        case .success(let context): tls = context
        case .failure(let error): throw .tlsFailed(endpoint: endpoint, reason: "cannot create a TLS context: \(error)")
        }
        let channel = try await step.openSocket(host: host, port: port, loop: group.next())
        let pipeline = try await step.installPipeline(on: channel, tls: tls)
        let peer = try await step.awaitHandshake(pipeline)
        let auth = try await step.authenticate(pipeline, peer: peer)
        if attempt?.isCancelled == true {
            await pipeline.closeLocally()
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
        return CastConnection(endpoint: endpoint, peerCertificateDER: peer, deviceAuth: auth, pipeline: pipeline, log: log)
    }

    /// The client TLS context every connection shares: the configuration never varies, and
    /// building a context (BoringSSL SSL_CTX, trust settings) for each connection costs more than
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

    /// Why a connect failed, as logs and errors say it: what the socket's errno means (NIO's own
    /// text names the syscall step, e.g. "connection reset (error set)" for a refusal), and for a
    /// descriptor shortage (a fleet past `ulimit -n`) what to raise.
    static func connectFailureReason(_ error: any Error) -> String {
        let text = socketErrorText(error) ?? "\(error)"
        return DescriptorShortage.hint(for: error).map { "\(text) (\($0))" } ?? text
    }

    /// The errno of a failed connect in words, nil when `error` carries none. A name given to
    /// Happy Eyeballs fails with every address's error: the first one is given.
    static func socketErrorText(_ error: any Error) -> String? {
        if let io = error as? IOError { return errnoText(io.errnoCode) }
        if let many = error as? NIOConnectionError, let first = many.connectionErrors.first { return socketErrorText(first.error) }
        return nil
    }

    static func errnoText(_ code: CInt) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused (ECONNREFUSED): nothing accepts connections on that port"
        case ECONNRESET: return "connection reset by the device (ECONNRESET)"
        case EHOSTUNREACH: return "host unreachable (EHOSTUNREACH): no route to the device"
        case ENETUNREACH: return "network unreachable (ENETUNREACH)"
        case ETIMEDOUT: return "connect timed out (ETIMEDOUT)"
        default: return "\(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// `host` as a socket address when it is an IPv4 or IPv6 literal (brackets allowed), else nil
    /// (`SocketAddress(ipAddress:)` parses with inet_pton and never resolves a name).
    static func ipLiteralAddress(host: String, port: Int) -> SocketAddress? {
        var literal = Substring(host)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        return try? SocketAddress(ipAddress: String(literal), port: port)
    }
}

/// A connection's pipeline once it is set up: the handlers the connection talks to, and the
/// promises the handshake and the end complete.
struct ConnectionPipeline {
    let channel: Channel
    let handshake: EventLoopPromise<[UInt8]>
    let closed: EventLoopFuture<CastConnectionCloseReason>
    let end: NIOLoopBound<CastConnectionEndHandler>
    let requests: NIOLoopBound<CastRequestHandler>
    let bridge: NIOLoopBound<CastInboundBridge>
    let messages: CastInboundStream

    /// Marks the close as ours (so late errors do not rename it) and closes.
    func closeLocally() async {
        let end = self.end
        try? await channel.eventLoop.submit { end.value.closingLocally = true }.get()
        try? await channel.close().get()
    }
}

/// The steps of one connect, sharing its endpoint, options, cancel handle, log and timeout.
private struct ConnectStep {
    let endpoint: String
    let options: CastConnectionOptions
    let attempt: CastConnectAttempt?
    let log: Logger
    let timeout: TimeAmount

    /// TCP. Handlers go in afterwards: `connect(host:)` may race several addresses (Happy
    /// Eyeballs) and the losers must not touch this connection's promises and stream. Nothing
    /// arrives before our ClientHello, so nothing is missed.
    func openSocket(host: String, port: Int, loop: EventLoop) async throws(CastTransportError) -> Channel {
        do {
            var bootstrap = ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                // One read of at most 16 KiB (a TLS record) per wake-up: what the inbound bridge
                // takes beyond its high watermark before it stops reading (back-pressure).
                .channelOption(.maxMessagesPerRead, value: 1)
                .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048,
                                                                                      maximum: CastConnection.maximumReadBytes))
            if let attempt {
                // Each socket as it is created, so a cancel closes one still connecting too.
                bootstrap = bootstrap.channelInitializer { channel in
                    attempt.adopt(channel)
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
            }
            if let address = CastConnection.ipLiteralAddress(host: host, port: port) {
                // An address needs no resolver: `connect(host:)` would still hand it to
                // getaddrinfo on a Dispatch thread and run Happy Eyeballs' timers around it.
                return try await bootstrap.connect(to: address).get()
            }
            return try await bootstrap.connect(host: host, port: port).get()
        } catch {
            let reason = CastConnection.connectFailureReason(error)
            if attempt?.isCancelled == true {
                log.debug("connect cancelled", ["reason": .string(reason)])
                throw .cancelled(endpoint: endpoint)
            }
            log.log(options.connectFailureLevel, "cannot connect: \(reason)", ["reason": .string(reason)])
            throw .connectFailed(endpoint: endpoint, reason: reason)
        }
    }

    /// TLS, the Cast codec with its traffic log, heartbeat, the end handler, request correlation
    /// and the bridge to the inbound stream.
    func installPipeline(on channel: Channel, tls: NIOSSLContext) async throws(CastTransportError) -> ConnectionPipeline {
        let loop = channel.eventLoop
        let handshake = loop.makePromise(of: [UInt8].self)
        let closed = loop.makePromise(of: CastConnectionCloseReason.self)
        let options = self.options
        let log = self.log
        let requestFields: LogFields = options.logFields.isEmpty ? ["device": .string(endpoint)] : options.logFields
        do {
            return try await loop.submit {
                // Closed since TCP connected (a cancel, a peer that closes at once): handlers added
                // now would never see the channel go inactive, and their promises would wait.
                guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                let end = CastConnectionEndHandler(closed: closed, log: log)
                let (bridge, messages) = CastInboundBridge.make(on: loop)
                let requests = CastRequestHandler(logSystem: options.logSystem, logFields: requestFields,
                                                  observer: options.requestObserver)
                let sync = channel.pipeline.syncOperations
                // The first request (or the device-auth challenge) leaves with the TLS Finished.
                let coalescer = HandshakeFlushCoalescer()
                try sync.addHandler(coalescer)
                try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil))
                try sync.addHandler(TLSHandshakeWaiter(promise: handshake, coalescer: coalescer))
                try sync.addCastMessageCodec(logSystem: options.logSystem)
                if let observer = options.frameObserver { try sync.addHandler(CastFrameTapHandler(observer: observer)) }
                // A device that floods its broadcasts is folded before the session sees them.
                if options.foldsBroadcastFloods {
                    try sync.addHandler(BroadcastFloodGuard(log: Logger(class: "BroadcastFloodGuard", system: options.logSystem).with(requestFields),
                                                            device: endpoint))
                }
                try sync.addHandler(CastHeartbeatHandler(pingInterval: options.heartbeatInterval, timeout: options.heartbeatTimeout,
                                                         senderID: options.senderID, logSystem: options.logSystem))
                try sync.addHandler(end)
                try sync.addHandler(requests)
                try sync.addHandler(bridge)
                return ConnectionPipeline(channel: channel, handshake: handshake, closed: closed.futureResult,
                                          end: NIOLoopBound(end, eventLoop: loop), requests: NIOLoopBound(requests, eventLoop: loop),
                                          bridge: NIOLoopBound(bridge, eventLoop: loop),
                                          messages: messages)
            }.get()
        } catch {
            handshake.fail(error)
            closed.succeed(.error("\(error)"))
            channel.close(promise: nil)
            if attempt?.isCancelled == true { throw .cancelled(endpoint: endpoint) }
            throw .connectFailed(endpoint: endpoint, reason: "the connection closed while it was being set up: \(error)")
        }
    }

    /// Waits for the TLS handshake, bounded by the timeout; returns the device's certificate.
    func awaitHandshake(_ pipeline: ConnectionPipeline) async throws(CastTransportError) -> [UInt8] {
        let endpoint = self.endpoint
        let seconds = options.connectTimeout
        let handshake = pipeline.handshake
        let timer = pipeline.channel.eventLoop.scheduleTask(in: timeout) {
            handshake.fail(CastTransportError.tlsFailed(endpoint: endpoint, reason: "no handshake within \(seconds) s"))
        }
        defer { timer.cancel() }
        do {
            return try await handshake.futureResult.get()
        } catch {
            await pipeline.closeLocally()
            if attempt?.isCancelled == true {
                log.debug("connect cancelled during the TLS handshake")
                throw .cancelled(endpoint: endpoint)
            }
            log.warning("TLS handshake failed: \(error)", ["reason": .string("\(error)")])
            if let error = error as? CastTransportError { throw error }
            throw .tlsFailed(endpoint: endpoint, reason: "\(error)")
        }
    }

    /// Device authentication as the options ask: not at all, or a challenge whose failure is
    /// logged (`warn`) or closes the connection (`require`).
    func authenticate(_ pipeline: ConnectionPipeline, peer: [UInt8]) async throws(CastTransportError) -> DeviceAuthResult {
        guard options.deviceAuth != .off else { return .notChecked }
        let (auth, unanswered) = await challenge(pipeline, peer: peer)
        if attempt?.isCancelled == true {
            await pipeline.closeLocally()
            log.debug("connect cancelled during device authentication")
            throw .cancelled(endpoint: endpoint)
        }
        switch (auth, options.deviceAuth) {
        case (.failed(let reason), .require) where unanswered:
            log.error("device authentication got no answer: \(reason); closing", ["reason": .string(reason)])
            await pipeline.closeLocally()
            throw .deviceAuthUnanswered(endpoint: endpoint, reason: reason)
        case (.failed(let reason), .require):
            log.error("device authentication failed: \(reason); closing", ["reason": .string(reason)])
            await pipeline.closeLocally()
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
        return auth
    }

    /// Sends a challenge with a fresh nonce and checks the reply against `options.trustAnchors`.
    /// `unanswered`: no reply in time, or the device closed instead of answering.
    private func challenge(_ pipeline: ConnectionPipeline, peer: [UInt8]) async -> (DeviceAuthResult, unanswered: Bool) {
        guard !options.trustAnchors.isEmpty else { return (.failed(reason: "no trust anchors configured"), false) }
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let channel = pipeline.channel
        let bridge = pipeline.bridge
        let loop = channel.eventLoop
        let reply = loop.makePromise(of: [UInt8].self)
        let timeout = self.timeout
        let timer = loop.scheduleTask(in: timeout) { bridge.value.cancelDeviceAuth(ChannelError.connectTimeout(timeout)) }
        loop.execute { bridge.value.awaitDeviceAuth(reply, channelActive: channel.isActive) }
        let challenge = CastMessage(sourceID: options.senderID, destinationID: EndpointID.receiver0.rawValue,
                                    namespace: .deviceAuth, payload: .binary(DeviceAuthVerifier.challenge(nonce: nonce, hash: .sha256)))
        channel.writeAndFlush(CastOutbound.message(challenge), promise: nil)
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
}
