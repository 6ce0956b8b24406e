import CastLogging
import CastProtocol
import NIOCore
import NIOSSL

/// Knows why a connection ended, and says it once: logged, fired down the pipeline as
/// ``CastConnectionEnded`` just before `channelInactive` (so pending requests fail with the
/// reason), and as the connection's close reason. Errors stop here. Loop-confined.
final class CastConnectionEndHandler: ChannelInboundHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage

    private let closed: EventLoopPromise<CastConnectionCloseReason>
    private let log: Logger
    private var reason: CastConnectionCloseReason?
    /// Set before we close: what follows (resets, TLS shutdown errors, a heartbeat timeout during
    /// the close_notify wait) does not change why the connection ended.
    var closingLocally = false

    init(closed: EventLoopPromise<CastConnectionCloseReason>, log: Logger) {
        self.closed = closed
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard !closingLocally else { return }
        switch error {
        case let timeout as CastHeartbeatTimeout:
            reason = reason ?? .heartbeatTimeout(silentFor: timeout.silentFor)
        case NIOSSLError.uncleanShutdown:
            break   // the device closed TCP without close_notify: an ordinary remote close
        case is CastMessageDecodingError:
            break   // one bad frame body, already logged by the codec; the connection goes on
        default:
            reason = reason ?? .error("\(error)")
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let ended = reason ?? (closingLocally ? .local : .remoteClosed)
        switch ended {
        case .local: log.info("connection closed by us")
        case .remoteClosed: log.warning("connection closed by the device")
        default: log.warning("connection lost: \(ended)", ["reason": .string("\(ended)")])
        }
        context.fireUserInboundEventTriggered(CastConnectionEnded(reason: ended))
        closed.succeed(ended)
        context.fireChannelInactive()
    }
}
