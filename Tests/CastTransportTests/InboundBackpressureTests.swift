import CastCore
import CastLogging
import CastProtocol
import CastTestSupport
@testable import CastTransport
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization
import SystemCrypto
import Testing

/// A device that floods the sender with unsolicited MEDIA_STATUS messages over real loopback TLS:
/// while the consumer does not read, the connection holds a bounded number of messages and the
/// device's writes back up; once it reads, every message arrives, in order.
@Suite("Inbound back-pressure", .timeLimit(.minutes(2)))
struct InboundBackpressureTests {
    static let total = 100_000
    /// What the connection may hold: its high watermark, plus the messages of the one socket read
    /// that crossed it (each flood message is more than 200 bytes on the wire).
    static let bound = CastInboundBridge.highWatermark + CastConnection.maximumReadBytes / 200

    @Test("100,000 unsolicited statuses: a bounded buffer while the consumer waits, then all of them in order")
    func floodIsBoundedAndLossless() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let device = FloodingDevice(total: Self.total)
        let server = try await device.start(group: group)
        var options = CastConnectionOptions()
        options.logSystem = LogSystem()
        options.heartbeatTimeout = 60   // the consumer's pause must not read as a silent device
        options.foldsBroadcastFloods = false   // the bridge's own bound, every message counted
        let connection = try await CastConnection.connect(host: "127.0.0.1", port: server.localAddress!.port!, options: options,
                                                          group: group)

        // Nobody reads: the device fills the socket buffers and then cannot write any more.
        let blocked = await pollUntil(timeout: 30) { device.isBlocked }
        #expect(blocked, "the device never found its writes backed up (sent \(device.sent) of \(Self.total))")
        let sentWhileWaiting = device.sent
        #expect(sentWhileWaiting < Self.total, "the whole flood went out while nobody read")
        let held = await connection.mostBufferedInbound()
        #expect(held <= Self.bound, "the connection held \(held) messages for its consumer")

        // Now read everything: nothing lost, nothing reordered.
        var received = 0
        var inOrder = true
        for await inbound in connection.messages {
            guard case .media(.mediaStatus(_, let statuses))? = inbound.payload else { continue }
            if statuses.first?.mediaSessionID != received + 1 { inOrder = false }
            received += 1
            if received == Self.total { break }
        }
        #expect(received == Self.total)
        #expect(inOrder)
        let mostHeld = await connection.mostBufferedInbound()
        #expect(mostHeld <= Self.bound, "held \(mostHeld)")
        await connection.close()
        try? await server.close().get()
        try await group.shutdownGracefully()
    }
}

extension InboundBackpressureTests {
    /// With the flood guard on (the default), the same flood reaches the session folded: far
    /// fewer messages, still in order, and the device's last status always among them.
    @Test("100,000 unsolicited statuses through the flood guard: folded, in order, the last one delivered")
    func floodIsFoldedKeepingTheNewest() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let device = FloodingDevice(total: Self.total)
        let server = try await device.start(group: group)
        var options = CastConnectionOptions()
        options.logSystem = LogSystem()
        options.heartbeatTimeout = 60
        let connection = try await CastConnection.connect(host: "127.0.0.1", port: server.localAddress!.port!, options: options,
                                                          group: group)
        var received = 0
        var last = 0
        var inOrder = true
        for await inbound in connection.messages {
            guard case .media(.mediaStatus(_, let statuses))? = inbound.payload, let id = statuses.first?.mediaSessionID else { continue }
            if id <= last { inOrder = false }
            last = id
            received += 1
            if id == Self.total { break }
        }
        #expect(last == Self.total, "the device's last status reached the session")
        #expect(inOrder)
        #expect(received < Self.total / 10, "\(received) of \(Self.total) reached the session")
        await connection.close()
        try? await server.close().get()
        try await group.shutdownGracefully()
    }
}

/// A TLS "device" that, once the handshake is done, writes `total` MEDIA_STATUS messages
/// (mediaSessionId 1, 2, …) as fast as its socket takes them, and says when the socket is full.
final class FloodingDevice: Sendable {
    let total: Int
    private let state = Mutex((sent: 0, blocked: false))

    init(total: Int) { self.total = total }

    var sent: Int { state.withLock { $0.sent } }
    var isBlocked: Bool { state.withLock { $0.blocked } }

    func start(group: EventLoopGroup) async throws -> Channel {
        let credentials = try DeviceCredentials.issue(for: "flooding-device", authority: TestAuthority.main)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(credentials.tlsCertificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(credentials.tlsPrivateKeyPEM.utf8), format: .pem)))
        let context = try NIOSSLContext(configuration: configuration)
        return try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                    try sync.addCastMessageCodec(logSystem: LogSystem())
                    try sync.addHandler(Writer(device: self))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    fileprivate func wrote(_ count: Int, blocked: Bool) {
        state.withLock { $0 = (sent: $0.sent + count, blocked: blocked) }
    }

    /// Writes while the channel is writable; resumes when it becomes writable again.
    private final class Writer: ChannelDuplexHandler {
        typealias InboundIn = CastMessage
        typealias OutboundIn = CastMessage
        typealias OutboundOut = CastMessage

        let device: FloodingDevice
        var next = 1
        var started = false

        init(device: FloodingDevice) { self.device = device }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event {
                started = true
                pump(context)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if started { pump(context) }
            context.fireChannelWritabilityChanged()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}   // PINGs and the like: ignored

        private func pump(_ context: ChannelHandlerContext) {
            var count = 0
            while context.channel.isWritable, next <= device.total {
                let status: JSONValue = ["type": "MEDIA_STATUS", "requestId": 0, "status": [
                    ["mediaSessionId": .int(Int64(next)), "playerState": "PLAYING", "currentTime": 1.5,
                     "media": ["contentId": "https://media.example/movie.mp4", "streamType": "BUFFERED", "contentType": "video/mp4"]],
                ]]
                context.write(wrapOutboundOut(CastMessage(source: "app-1", destination: "*", namespace: .media, json: status)),
                              promise: nil)
                next += 1
                count += 1
                if count % 64 == 0 { context.flush() }
            }
            context.flush()
            device.wrote(count, blocked: next <= device.total && !context.channel.isWritable)
        }
    }
}
