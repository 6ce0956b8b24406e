import CastCore
import CastLogging
import CastProtocol
import CastTestSupport
import CastTransport
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A minimal Cast sender for tests: TLS without certificate checks (as every real sender),
/// the production frame codec, and a queue of received messages with timeouts. Like every real
/// sender it answers the device's PINGs (they are still queued), unless `answersPings` is false:
/// otherwise a test that runs longer than the device's heartbeat timeout (a loaded machine, the
/// whole suite in parallel) would lose its connection to the device's liveness check.
final class TestCastClient: @unchecked Sendable {
    let channel: Channel
    private let inbox: Inbox

    private init(channel: Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// `tap`, when given, records every byte the device sends, TLS records as on the wire.
    static func connect(host: String, port: Int, group: EventLoopGroup, answersPings: Bool = true,
                        tap: WireTap? = nil) async throws -> TestCastClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let context = try NIOSSLContext(configuration: tls)
        let inbox = Inbox()
        let handshake = group.next().makePromise(of: [UInt8].self)
        let connecting = ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let tap { try sync.addHandler(WireTapHandler(tap: tap)) }
                    try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try sync.addHandler(TLSHandshakeWaiter(promise: handshake))
                    try sync.addCastMessageCodec(logSystem: LogSystem(), trafficLog: false)
                    try sync.addHandler(InboxHandler(inbox: inbox, answersPings: answersPings))
                }
            }
            .connect(host: host, port: port)
        let channel: Channel
        do { channel = try await connecting.get() } catch {
            handshake.fail(error)
            throw error
        }
        // Returned only once TLS is up, so the peer certificate is known; bounded by 10 s.
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(10)) {
            handshake.fail(ChannelError.connectTimeout(.seconds(10)))
        }
        defer { timeout.cancel() }
        do { _ = try await handshake.futureResult.get() } catch {
            try? await channel.close().get()
            throw error
        }
        return TestCastClient(channel: channel, inbox: inbox)
    }

    func send(_ message: CastMessage) async throws {
        try await channel.writeAndFlush(message).get()
    }

    func send(namespace: CastNamespace, destination: String = "receiver-0", source: String = "sender-test",
              _ json: JSONValue) async throws {
        try await send(CastMessage(source: source, destination: destination, namespace: namespace, json: json))
    }

    /// The DER of the certificate the device presented in the TLS handshake.
    func peerCertificateDER() async throws -> [UInt8]? {
        try await channel.nioSSL_peerCertificate().get()?.toDERBytes()
    }

    /// Writes raw bytes under the frame codec (inside TLS).
    func sendRaw(_ bytes: [UInt8]) async throws {
        let channel = self.channel
        try await channel.eventLoop.submit {
            let below = try channel.pipeline.syncOperations.context(handlerType: CastFrameDecoder.self)
            below.writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes)), promise: nil)
        }.get()
    }

    /// The next message matching `predicate` (others are skipped), or nil after `timeout` seconds.
    func next(timeout: Double = 5, where predicate: @escaping @Sendable (CastMessage) -> Bool = { _ in true })
        async -> CastMessage? {
        await pollValue(timeout: timeout) { inbox.take(where: predicate) }
    }

    /// The next JSON message of `type` on `namespace`.
    func next(type: String, namespace: CastNamespace, timeout: Double = 5) async -> JSONValue? {
        let message = await next(timeout: timeout) { message in
            guard message.namespace == namespace, let text = message.payload.text,
                  let json = try? JSONValue.parse(text) else { return false }
            return (json["type"]?.string ?? json["responseType"]?.string) == type
        }
        return message.flatMap { $0.payload.text }.flatMap { try? JSONValue.parse($0) }
    }

    /// True once the server closed the connection (within `timeout`).
    func waitClosed(timeout: Double = 5) async -> Bool {
        await pollUntil(timeout: timeout) { !channel.isActive }
    }

    func close() async {
        try? await channel.close().get()
    }

    /// Errors the client's pipeline reported (frame and message decoding), oldest first.
    var errors: [Error] { inbox.errors.withLock { $0 } }

    /// True once an error matching `predicate` was reported (within `timeout`).
    func waitError(timeout: Double = 5, where predicate: (Error) -> Bool) async -> Bool {
        await pollUntil(timeout: timeout) { errors.contains(where: predicate) }
    }

    final class Inbox: Sendable {
        private let messages = Mutex<[CastMessage]>([])
        let errors = Mutex<[Error]>([])
        func append(_ message: CastMessage) { messages.withLock { $0.append(message) } }
        func take(where predicate: (CastMessage) -> Bool) -> CastMessage? {
            messages.withLock { list in
                guard let index = list.firstIndex(where: predicate) else { return nil }
                return list.remove(at: index)
            }
        }
    }

    private final class InboxHandler: ChannelInboundHandler {
        typealias InboundIn = CastMessage
        typealias OutboundOut = CastMessage
        let inbox: Inbox
        let answersPings: Bool
        init(inbox: Inbox, answersPings: Bool) {
            self.inbox = inbox
            self.answersPings = answersPings
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let message = unwrapInboundIn(data)
            inbox.append(message)
            if answersPings, message.namespace == .heartbeat,
               message.payload.text.flatMap({ try? JSONValue.parse($0) })?["type"]?.string == "PING" {
                context.writeAndFlush(wrapOutboundOut(CastMessage(sourceID: message.destinationID, destinationID: message.sourceID,
                                                                  namespace: .heartbeat, payload: CastHeartbeatHandler.pongPayload)),
                                      promise: nil)
            }
        }
        func errorCaught(context: ChannelHandlerContext, error: Error) { inbox.errors.withLock { $0.append(error) } }
    }
}

/// The raw bytes a test client received, below TLS.
final class WireTap: Sendable {
    private let received = Mutex<[UInt8]>([])
    func append(_ bytes: [UInt8]) { received.withLock { $0 += bytes } }
    var bytes: [UInt8] { received.withLock { $0 } }
}

/// Copies every inbound buffer into a ``WireTap`` and passes it on unchanged.
private final class WireTapHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let tap: WireTap
    init(tap: WireTap) { self.tap = tap }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        tap.append(Array(buffer.readableBytesView))
        context.fireChannelRead(data)
    }
}
