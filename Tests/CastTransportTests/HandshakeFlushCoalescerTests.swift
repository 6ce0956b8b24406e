import NIOCore
import NIOEmbedded
import NIOPosix
import NIOSSL
import SystemCrypto
import Synchronization
import Testing
@testable import CastTransport

/// ``HandshakeFlushCoalescer``: its decisions on an embedded channel, then real TLS 1.2 and 1.3
/// handshakes over loopback with a hold of an hour, which would hang a handshake that waited on it.
@Suite("HandshakeFlushCoalescer", .timeLimit(.minutes(1)))
struct HandshakeFlushCoalescerTests {
    /// Stands in for the TLS handler: on each read it writes and flushes `flight` and, when told,
    /// reports the handshake completed (as TLSHandshakeWaiter does, inside the same read).
    final class FakeTLS: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let coalescer: HandshakeFlushCoalescer
        var completesOnRead: Bool
        init(_ coalescer: HandshakeFlushCoalescer, completesOnRead: Bool) {
            self.coalescer = coalescer
            self.completesOnRead = completesOnRead
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "flight")), promise: nil)
            if completesOnRead { coalescer.handshakeCompleted() }
        }
    }

    func channel(completesOnRead: Bool, maxHold: TimeAmount = .seconds(3600)) throws -> EmbeddedChannel {
        let coalescer = HandshakeFlushCoalescer(maxHold: maxHold)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(coalescer)
        try channel.pipeline.syncOperations.addHandler(FakeTLS(coalescer, completesOnRead: completesOnRead))
        return channel
    }

    func sent(_ channel: EmbeddedChannel) throws -> [String] {
        var out: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { out.append(String(buffer: buffer)) }
        return out
    }

    @Test("a flight flushed during a read that does not complete the handshake leaves when the read is handled")
    func intermediateFlightIsNotHeld() throws {
        let channel = try channel(completesOnRead: false)
        try channel.writeAndFlush(ByteBuffer(string: "hello")).wait()   // the ClientHello: outside a read
        #expect(try sent(channel) == ["hello"])
        try channel.writeInbound(ByteBuffer(string: "server flight"))
        #expect(try sent(channel) == ["flight"])
        _ = try channel.finish()
    }

    @Test("the Finished is held and leaves with the first request, in order; later writes pass at once")
    func finishedLeavesWithTheFirstRequest() throws {
        let channel = try channel(completesOnRead: true)
        try channel.writeInbound(ByteBuffer(string: "server flight"))
        #expect(try sent(channel).isEmpty)
        try channel.writeAndFlush(ByteBuffer(string: "request")).wait()
        #expect(try sent(channel) == ["flight", "request"])
        try channel.writeAndFlush(ByteBuffer(string: "next")).wait()
        #expect(try sent(channel) == ["next"])
        _ = try channel.finish()
    }

    @Test("a Finished nobody follows leaves after maxHold")
    func heldFinishedIsBounded() throws {
        let channel = try channel(completesOnRead: true, maxHold: .milliseconds(20))
        try channel.writeInbound(ByteBuffer(string: "server flight"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(19))
        #expect(try sent(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try sent(channel) == ["flight"])
        _ = try channel.finish()
    }

    @Test("a close while the Finished is held sends it first")
    func closeReleases() throws {
        let channel = try channel(completesOnRead: true)
        try channel.writeInbound(ByteBuffer(string: "server flight"))
        #expect(try sent(channel).isEmpty)
        try channel.close().wait()
        #expect(try sent(channel) == ["flight"])
    }

    // MARK: Real TLS

    /// A TLS server on loopback that echoes what it reads, at most `version`; with `silent`, it
    /// completes the handshake, then only counts what it reads (in `silent`) and never answers.
    static func echoServer(maximum version: TLSVersion, group: EventLoopGroup, silent: ReadCounter? = nil) async throws -> Channel {
        let authority = try SimulatorAuthority.generate()
        let credentials = try DeviceCredentials.issue(for: "coalescer-test", authority: authority)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(credentials.tlsCertificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(credentials.tlsPrivateKeyPEM.utf8), format: .pem)))
        configuration.maximumTLSVersion = version
        let context = try NIOSSLContext(configuration: configuration)
        return try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    if let silent {
                        try channel.pipeline.syncOperations.addHandler(Silent(counter: silent))
                    } else {
                        try channel.pipeline.syncOperations.addHandler(Echo())
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    final class Echo: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(data, promise: nil)
        }
    }

    /// How many reads a silent server has seen.
    final class ReadCounter: Sendable {
        let reads = Mutex(0)
    }

    final class Silent: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let counter: ReadCounter
        init(counter: ReadCounter) { self.counter = counter }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { counter.reads.withLock { $0 += 1 } }
    }

    final class FirstReply: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let promise: EventLoopPromise<String>
        init(_ promise: EventLoopPromise<String>) { self.promise = promise }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            promise.succeed(String(buffer: unwrapInboundIn(data)))
        }
        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(ChannelError.eof)
        }
    }

    @Test("real TLS 1.2 and 1.3 handshakes complete and the first request is answered, with a hold of an hour",
          arguments: [TLSVersion.tlsv12, .tlsv13])
    func realHandshakes(version: TLSVersion) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.echoServer(maximum: version, group: group)
        let loop = group.next()
        let handshake = loop.makePromise(of: [UInt8].self)
        let reply = loop.makePromise(of: String.self)
        var client = TLSConfiguration.makeClientConfiguration()
        client.certificateVerification = .none
        let context = try NIOSSLContext(configuration: client)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    let coalescer = HandshakeFlushCoalescer(maxHold: .seconds(3600))
                    try sync.addHandler(coalescer)
                    try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try sync.addHandler(TLSHandshakeWaiter(promise: handshake, coalescer: coalescer))
                    try sync.addHandler(FirstReply(reply))
                }
            }
            .connect(to: server.localAddress!).get()
        let peer = try await handshake.futureResult.get()
        #expect(!peer.isEmpty, "the peer certificate comes with the completed handshake")
        try await channel.writeAndFlush(ByteBuffer(string: "first request")).get()
        #expect(try await reply.futureResult.get() == "first request")
        try await channel.close()
        try await server.close()
        try await group.shutdownGracefully()
    }
}
