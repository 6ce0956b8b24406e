import CastProtocol
import NIOCore

/// Records every ``CastMessage`` in and out of one connection in the ``FrameLog``.
/// Sits right after the message codec, so what it records is exactly what crossed the wire.
final class FrameLogHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let log: FrameLog
    private let device: String
    private let connection: UInt64
    private var peer = "?"

    init(log: FrameLog, device: String, connection: UInt64) {
        self.log = log
        self.device = device
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        peer = SocketAddress.logDescription(context.channel.remoteAddress)
        log.event("opened", device: device, connection: connection, peer: peer)
    }

    func channelInactive(context: ChannelHandlerContext) {
        log.event("closed", device: device, connection: connection, peer: peer)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        log.message(unwrapInboundIn(data), direction: "in", device: device, connection: connection, peer: peer)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        log.message(unwrapOutboundIn(data), direction: "out", device: device, connection: connection, peer: peer)
        context.write(data, promise: promise)
    }
}
