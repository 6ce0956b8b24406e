import CastCore
import CastLogging
import NIOCore

/// Duplex handler: frame bodies in → ``CastMessage``; ``CastMessage`` out → whole frames (length
/// prefix and body written into one buffer by ``CastMessageWireWriter``).
///
/// A body that is not a valid `CastMessage` is logged (peer, size, reason), fired as
/// ``CastMessageDecodingError`` and dropped; the connection stays open because framing is intact.
/// A message whose body would exceed `maxBodySize` fails its write promise with ``CastFrameError``
/// and is not sent (receivers such as VLC's drop the connection on large frames).
/// Runs on the channel's event loop.
public final class CastMessageCodec: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = CastMessage
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = ByteBuffer

    private let log: Logger
    private let maxBodySize: Int
    private var decoder = CastMessageDecoder()

    public init(maxBodySize: Int = CastFrameLimits.maxBodySize, logSystem: LogSystem = .shared) {
        self.maxBodySize = maxBodySize
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
        let message = unwrapOutboundIn(data)
        let size = CastMessageWireWriter.bodySize(of: message)
        if let error = CastFrameLimits.refusal(size: size, limit: maxBodySize) {
            log.error("refusing to send: \(error)", [
                "peer": .string(CastFrameDecoder.peer(context)), "size": .int(size), "limit": .int(maxBodySize),
                "namespace": .string(message.namespace.rawValue),
            ])
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(CastMessageWireWriter.frame(of: message, size: size, allocator: context.channel.allocator)),
                      promise: promise)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the Cast codec stack: ``CastFrameDecoder``, ``CastMessageCodec`` and, unless
    /// `trafficLog` is false, ``CastTrafficLogHandler``. After it, handlers read and write
    /// ``CastMessage`` values. Raw bytes written from the ``CastFrameDecoder``'s context go out
    /// unframed (fault injection).
    public func addCastMessageCodec(logSystem: LogSystem = .shared, trafficLog: Bool = true) throws {
        try addHandler(CastFrameDecoder(logSystem: logSystem))
        try addHandler(CastMessageCodec(logSystem: logSystem))
        if trafficLog { try addHandler(CastTrafficLogHandler(logSystem: logSystem)) }
    }
}
