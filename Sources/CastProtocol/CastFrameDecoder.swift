import CastLogging
import NIOCore

/// Inbound handler: bytes → frame bodies (`ByteBuffer`, without the length prefix).
///
/// On a zero or oversized length it logs the peer and the size, fires the typed
/// ``CastFrameError`` and closes the channel: after a bad prefix the stream cannot be trusted.
/// Runs on the channel's event loop.
public final class CastFrameDecoder: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer

    private var machine: FrameDecodingStateMachine
    private let log: Logger
    /// A bad prefix was reported and the channel is closing: the leftover bytes are not news.
    private var failed = false

    public init(maxBodySize: Int = CastFrameLimits.maxBodySize, logSystem: LogSystem = .shared) {
        machine = FrameDecodingStateMachine(maxBodySize: maxBodySize)
        log = Logger(class: "CastFrameDecoder", system: logSystem)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        machine.feed(unwrapInboundIn(data))
        do {
            while let body = try machine.nextFrame() {
                context.fireChannelRead(wrapInboundOut(body))
            }
        } catch {
            failed = true
            report(error, context: context)
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        if failed {
            context.fireChannelInactive()
            return
        }
        do {
            let unread = try machine.finish()
            if unread > 0 {
                log.debug("connection closed with \(unread) whole frame(s) not read (it closed while an earlier frame was handled)", [
                    "peer": .string(CastFrameDecoder.peer(context)), "frames": .int(unread), "buffered": .int(machine.bufferedBytes),
                ])
            }
        } catch {
            log.warning("connection closed inside a frame: \(error)", [
                "peer": .string(CastFrameDecoder.peer(context)), "size": .int(error.announcedSize),
                "buffered": .int(machine.bufferedBytes),
            ])
        }
        context.fireChannelInactive()
    }

    private func report(_ error: CastFrameError, context: ChannelHandlerContext) {
        log.error("closing connection to \(CastFrameDecoder.peer(context)): \(error)", [
            "peer": .string(CastFrameDecoder.peer(context)), "size": .int(error.announcedSize),
            "limit": .int(machine.maxBodySize),
        ])
    }

    static func peer(_ context: ChannelHandlerContext) -> String {
        SocketAddress.logDescription(context.channel.remoteAddress)
    }
}

extension SocketAddress {
    /// `127.0.0.1:8009`, `[::1]:8009`, a socket path, or `unknown peer`: the `peer` field of logs.
    public static func logDescription(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown peer" }
        switch address {
        case .v4:
            return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6:
            return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket:
            return address.pathname ?? "unix socket"
        }
    }
}
