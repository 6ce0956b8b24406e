import NIOCore

/// Put between the socket and the TLS handler of a client connection: the TLS client's last
/// handshake flight (its Finished) and the connection's first request leave in one socket write.
///
/// NIOSSL writes and flushes the Finished while it reads the server's flight; the first request
/// follows a moment later, from the task the completed handshake resumes. Two writes, two
/// segments, two reads and wake-ups on the device. Here a flush made while a read is being
/// processed is held until that read has been handled; if the handshake completed during it
/// (``handshakeCompleted()``, from ``TLSHandshakeWaiter``), the Finished stays held until the next
/// flush from above, the first request, or at most `maxHold`. Any other flight made during a read
/// (TLS 1.2's client Finished, which the server answers before the handshake completes; a second
/// ClientHello after a HelloRetryRequest) goes out as soon as that read has been handled, so no
/// handshake waits on the hold. After the release the handler passes everything through.
///
/// Loop-confined.
package final class HandshakeFlushCoalescer: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private enum State {
        /// Flushes pass, except one made during a read, which is held until the read is handled.
        case watching
        /// A flush made during the read being handled is held.
        case heldInRead
        /// The Finished is held until the next flush from above or the timer.
        case holdingFinished(Scheduled<Void>)
        /// Everything passes through.
        case done
    }

    private var state = State.watching
    private var reading = false
    private var completedDuringRead = false
    private let maxHold: TimeAmount

    /// `maxHold`: how long the Finished may wait for the first request (bounded so a connection
    /// that writes nothing after the handshake still completes it on the server side).
    package init(maxHold: TimeAmount = .milliseconds(20)) {
        self.maxHold = maxHold
    }

    /// The TLS handshake has completed (called on the loop, by the handler that sees the event).
    package func handshakeCompleted() {
        if reading {
            completedDuringRead = true
        } else if case .watching = state {
            state = .done   // completed outside a read: nothing was held, nothing to hold from now on
        }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .watching = state else {
            context.fireChannelRead(data)
            return
        }
        reading = true
        context.fireChannelRead(data)
        reading = false
        let completed = completedDuringRead
        completedDuringRead = false
        guard case .heldInRead = state else {
            if completed { state = .done }
            return
        }
        if completed {
            let timer = context.eventLoop.assumeIsolated().scheduleTask(in: maxHold) { [self] in
                if case .holdingFinished = state { release(context) }
            }
            state = .holdingFinished(timer)
        } else {
            state = .watching
            context.flush()
        }
    }

    package func flush(context: ChannelHandlerContext) {
        switch state {
        case .watching where reading:
            state = .heldInRead
        case .heldInRead:
            break   // the read is still being handled: one flush at its end
        case .holdingFinished(let timer):
            timer.cancel()
            release(context)
        default:
            context.flush()
        }
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // What is held goes out before the close (a close_notify, say).
        switch state {
        case .holdingFinished(let timer):
            timer.cancel()
            release(context)
        case .heldInRead:
            release(context)
        case .watching, .done:
            break
        }
        context.close(mode: mode, promise: promise)
    }

    private func release(_ context: ChannelHandlerContext) {
        state = .done
        context.flush()
    }
}
