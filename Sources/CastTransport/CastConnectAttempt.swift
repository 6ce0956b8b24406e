import NIOCore
import Synchronization

/// A handle on a ``CastConnection/connect(host:port:options:group:attempt:)`` in flight, for
/// an owner that may give it up: a session that ends while it connects or reconnects. After
/// ``cancel()`` the connect closes the socket it has opened (or is opening) at once and throws
/// ``CastTransportError/cancelled(endpoint:)`` at its next step, instead of going on until its
/// timeout. The owner then waits for the connect to return; from then on nothing of it touches
/// the event loop, which may shut down. (Call ``cancel()`` while that loop still runs.)
package final class CastConnectAttempt: Sendable {
    private struct State {
        var cancelled = false
        var channels: [any Channel] = []
    }

    private let state = Mutex(State())

    package init() {}

    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Gives the attempt up (idempotent): its sockets are closed now.
    package func cancel() {
        let open = state.withLock { state -> [any Channel] in
            state.cancelled = true
            defer { state.channels = [] }
            return state.channels
        }
        for channel in open { channel.eventLoop.execute { Self.abort(channel) } }
    }

    /// A socket of the attempt (Happy Eyeballs may open several); closed at once when the
    /// attempt is already cancelled.
    func adopt(_ channel: any Channel) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.channels.append(channel) }
            return state.cancelled
        }
        if cancelled { channel.eventLoop.execute { Self.abort(channel) } }
    }

    /// On the channel's loop: the close is ours (logged as such, not as the device's doing), and
    /// it is made below TLS, so it does not wait up to NIOSSL's shutdown timeout for the
    /// device's close_notify (a device that stalls would never send one).
    private static func abort(_ channel: any Channel) {
        let pipeline = channel.pipeline.syncOperations
        if let end = try? pipeline.handler(type: CastConnectionEndHandler.self) { end.closingLocally = true }
        if let belowTLS = try? pipeline.context(handlerType: HandshakeFlushCoalescer.self) {
            belowTLS.close(promise: nil)
        } else {
            channel.close(promise: nil)
        }
    }
}
