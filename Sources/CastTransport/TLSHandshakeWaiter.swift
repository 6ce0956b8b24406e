import NIOCore
import NIOSSL
import NIOTLS

/// Put right after the TLS handler: completes `promise` with the DER of the peer's certificate
/// (empty when it sent none) when the TLS handshake is done, fails it if the channel errs or
/// closes first. Lets a connect step return only once TLS is up, with the certificate read on the
/// loop as the handshake completes (asking for it afterwards would be one more hop to the loop).
package final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<[UInt8]>
    private let coalescer: HandshakeFlushCoalescer?

    /// `coalescer`: the ``HandshakeFlushCoalescer`` below the TLS handler, told when the handshake
    /// completes (before `promise` is completed).
    package init(promise: EventLoopPromise<[UInt8]>, coalescer: HandshakeFlushCoalescer? = nil) {
        self.promise = promise
        self.coalescer = coalescer
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            coalescer?.handshakeCompleted()
            let peer = (try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes()) ?? []
            promise.succeed(peer)
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
