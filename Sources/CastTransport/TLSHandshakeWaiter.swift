import NIOCore
import NIOTLS

/// Put right after the TLS handler: completes `promise` when the TLS handshake is done, fails it
/// if the channel errs or closes first. Lets a connect step return only once TLS is up (so the
/// peer certificate is known).
public final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<Void>

    public init(promise: EventLoopPromise<Void>) { self.promise = promise }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { promise.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    public func errorCaught(context: ChannelHandlerContext, error: Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
