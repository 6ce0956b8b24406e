import NIOCore
import NIOPosix
import Synchronization

/// A TCP listener on 127.0.0.1 that never speaks TLS: it accepts connections and never answers
/// (a device whose TLS stalls, so a connect to it waits in its handshake), or with `closeAtOnce`
/// closes each connection as it comes in. Counts the connections it kept and how many of them
/// the peer has closed since.
package final class SilentListener: Sendable {
    package let port: Int
    private let channel: any Channel
    private let counts: Counts

    package static func start(group: EventLoopGroup, closeAtOnce: Bool = false) async throws -> SilentListener {
        let counts = Counts()
        let channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { child in
                if closeAtOnce { return child.close() }
                return child.eventLoop.makeCompletedFuture { try child.pipeline.syncOperations.addHandler(Counter(counts)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return SilentListener(channel: channel, counts: counts)
    }

    private init(channel: any Channel, counts: Counts) {
        self.channel = channel
        self.counts = counts
        self.port = channel.localAddress?.port ?? 0
    }

    package var accepted: Int { counts.value.withLock { $0.accepted } }
    package var closedByPeer: Int { counts.value.withLock { $0.closed } }

    /// Waits (bounded, polling) until `predicate` holds for the listener.
    package func wait(timeout: Double = 10, until predicate: (SilentListener) -> Bool) async -> Bool {
        await pollUntil(timeout: timeout) { predicate(self) }
    }

    /// Closes the listener (accepted connections close with their event loop).
    package func stop() async {
        try? await channel.close().get()
    }

    private final class Counts: Sendable {
        let value = Mutex((accepted: 0, closed: 0))
    }

    private final class Counter: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let counts: Counts
        init(_ counts: Counts) { self.counts = counts }
        func channelActive(context: ChannelHandlerContext) { counts.value.withLock { $0.accepted += 1 } }
        func channelInactive(context: ChannelHandlerContext) { counts.value.withLock { $0.closed += 1 } }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}   // never answers
    }
}
