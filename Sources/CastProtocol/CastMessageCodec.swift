import CastCore
import CastLogging
import NIOCore

/// Duplex handler: frame bodies ↔ ``CastMessage``.
///
/// A body that is not a valid `CastMessage` is logged (peer, size, reason), fired as
/// ``CastMessageDecodingError`` and dropped; the connection stays open because framing is intact.
/// Runs on the channel's event loop.
public final class CastMessageCodec: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = CastMessage
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = ByteBuffer

    private let log: Logger
    private var decoder = CastMessageDecoder()

    public init(logSystem: LogSystem = .shared) {
        log = Logger(class: "CastMessageCodec", system: logSystem)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        do {
            let message = try decoder.decode(body)
            context.fireChannelRead(wrapInboundOut(message))
        } catch {
            log.warning("dropped an undecodable message from \(CastFrameDecoder.peer(context)): \(error)", [
                "peer": .string(CastFrameDecoder.peer(context)), "size": .int(body.readableBytes),
            ])
            context.fireErrorCaught(error)
        }
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(unwrapOutboundIn(data).serializedBody()), promise: promise)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the Cast codec stack: ``CastFrameDecoder``, ``CastFrameEncoder``, ``CastMessageCodec``
    /// and, unless `trafficLog` is false, ``CastTrafficLogHandler``. After it, handlers read and
    /// write ``CastMessage`` values.
    public func addCastMessageCodec(logSystem: LogSystem = .shared, trafficLog: Bool = true) throws {
        try addHandler(CastFrameDecoder(logSystem: logSystem))
        try addHandler(CastFrameEncoder(logSystem: logSystem))
        try addHandler(CastMessageCodec(logSystem: logSystem))
        if trafficLog { try addHandler(CastTrafficLogHandler(logSystem: logSystem)) }
    }
}
