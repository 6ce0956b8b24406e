import CastCore
import CastDeviceAuth
import SystemCrypto
import CastProtocol
import NIOCore
import Synchronization

/// The last handler of a connection: hands inbound messages to ``CastInboundStream`` with
/// back-pressure, and the device-auth reply to the connect that waits for it. Loop-confined.
///
/// Back-pressure: once the stream holds ``highWatermark`` messages the consumer has not taken,
/// the bridge stops passing the channel's `read` on, so the socket is no longer read and TCP
/// pushes back on the device; it reads again when the consumer is down to ``lowWatermark``. A
/// device that floods the sender costs a bounded buffer, never unbounded memory.
final class CastInboundBridge: ChannelDuplexHandler {
    typealias InboundIn = CastInbound
    typealias OutboundIn = CastOutbound
    typealias OutboundOut = CastOutbound

    static let lowWatermark = 16
    static let highWatermark = 64

    typealias Producer = NIOAsyncSequenceProducer<
        CastInbound, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, ConsumerDemand
    >

    private let source: Producer.Source
    private let demand: ConsumerDemand
    private var pendingAuth: EventLoopPromise<[UInt8]>?
    /// The consumer is behind: a `read` waits in ``heldRead`` until it catches up.
    private var paused = false
    private var heldRead = false
    private var context: ChannelHandlerContext?
    /// Messages handed to the stream so far, and the most it held at once (tests of the bound).
    private var yielded = 0
    private(set) var mostBuffered = 0

    /// The bridge and the stream it feeds.
    static func make(on loop: EventLoop) -> (bridge: CastInboundBridge, stream: CastInboundStream) {
        let demand = ConsumerDemand()
        let made = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: lowWatermark, highWatermark: highWatermark), finishOnDeinit: true,
            delegate: demand)
        let bridge = CastInboundBridge(source: made.source, demand: demand)
        demand.attach(NIOLoopBound(bridge, eventLoop: loop))
        return (bridge, CastInboundStream(base: made.sequence, taken: demand))
    }

    private init(source: Producer.Source, demand: ConsumerDemand) {
        self.source = source
        self.demand = demand
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    // MARK: Device auth

    /// The next deviceauth message completes `promise` instead of going to the stream.
    func awaitDeviceAuth(_ promise: EventLoopPromise<[UInt8]>, channelActive: Bool) {
        guard channelActive else {
            promise.fail(ChannelError.eof)
            return
        }
        pendingAuth = promise
    }

    /// Gives up waiting for the device-auth reply (a later one is then an ordinary message).
    func cancelDeviceAuth(_ error: Error) {
        pendingAuth?.fail(error)
        pendingAuth = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let inbound = unwrapInboundIn(data)
        if inbound.message.namespace == .deviceAuth, let pending = pendingAuth {
            pendingAuth = nil
            guard case .binary(let bytes) = inbound.message.payload else {
                pending.fail(DeviceAuthError.malformedReply("text payload on the deviceauth namespace"))
                return
            }
            pending.succeed(bytes)
            return
        }
        yielded += 1
        mostBuffered = max(mostBuffered, yielded - demand.taken)
        switch source.yield(inbound) {
        case .produceMore: break
        case .stopProducing: paused = true
        case .dropped:
            // Nobody reads any more (the stream was given up): the request must not wait forever.
            inbound.reply.map { _ in inbound.completeReply() }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pendingAuth?.fail(ChannelError.eof)
        pendingAuth = nil
        demand.channelEnded()
        source.finish()
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    func read(context: ChannelHandlerContext) {
        if paused {
            heldRead = true
        } else {
            context.read()
        }
    }

    /// The consumer caught up: read again.
    fileprivate func resume() {
        paused = false
        guard heldRead, let context else { return }
        heldRead = false
        context.read()
    }

    /// The consumer stopped reading for good: nobody would see the replies, so we end the
    /// connection.
    fileprivate func consumerGone() {
        guard let context else { return }
        if let end = try? context.pipeline.syncOperations.handler(type: CastConnectionEndHandler.self) { end.closingLocally = true }
        context.close(promise: nil)
    }
}

/// The consumer's side of the back-pressure: tells the bridge, on its loop, to read again or that
/// nobody reads any more. Once the channel has ended it tells nothing (the loop may be gone).
final class ConsumerDemand: NIOAsyncSequenceProducerDelegate {
    private struct State {
        var bridge: NIOLoopBound<CastInboundBridge>?
        var ended = false
    }

    private let state = Mutex(State())
    private let takenCount = Atomic(0)

    func attach(_ bridge: NIOLoopBound<CastInboundBridge>) { state.withLock { $0.bridge = bridge } }

    func channelEnded() {
        state.withLock {
            $0.ended = true
            $0.bridge = nil
        }
    }

    /// One message taken by the consumer.
    func took() { takenCount.add(1, ordering: .relaxed) }

    /// Messages the consumer has taken so far.
    var taken: Int { takenCount.load(ordering: .relaxed) }

    func produceMore() {
        guard let bridge = state.withLock({ $0.ended ? nil : $0.bridge }) else { return }
        bridge.eventLoop.execute { bridge.value.resume() }
    }

    func didTerminate() {
        guard let bridge = state.withLock({ $0.ended ? nil : $0.bridge }) else { return }
        bridge.eventLoop.execute { bridge.value.consumerGone() }
    }
}

/// A connection's inbound messages (heartbeats and the device-auth reply excepted), in order,
/// each with its decoded payload and the request it answers (``CastInbound/completeReply()``).
/// One consumer, one iteration: it finishes when the connection ends, and a consumer that stops
/// iterating (a `break`, its task cancelled) ends the connection, as nobody would read the replies.
package struct CastInboundStream: AsyncSequence, Sendable {
    package typealias Element = CastInbound

    let base: CastInboundBridge.Producer
    let taken: ConsumerDemand

    package struct AsyncIterator: AsyncIteratorProtocol {
        var base: CastInboundBridge.Producer.AsyncIterator
        let taken: ConsumerDemand

        package mutating func next() async -> CastInbound? {
            let next = await base.next()
            if next != nil { taken.took() }
            return next
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), taken: taken)
    }
}
