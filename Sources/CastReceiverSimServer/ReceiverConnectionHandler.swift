import CastCore
import CastDeviceAuth
import CastLogging
import CastProtocol
import CastReceiverSim
import NIOCore
import NIOSSL

/// The last handler of a simulated device's CASTV2 connection: answers the transport-level
/// namespaces itself (heartbeat PING/PONG and liveness, device auth) and hands every other
/// message to its ``SimulatedDevice``. Writes what the device sends back.
///
/// Under the device's ``SimulatedDevice/latency`` every message in and out waits in a
/// ``MessageDelayLine`` (in order, one timer per direction): an inbound one is handled (and its
/// time is `now` for the state machine) when it is due, an outbound one written then. Without
/// latency both lines stay empty and nothing is scheduled: messages go straight through.
///
/// Runs on the device's event loop (the channel's loop).
final class ReceiverConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = CastMessage
    typealias OutboundOut = CastMessage

    let id: SenderConnectionID
    private unowned let device: SimulatedDevice
    private let log: Logger
    /// Signs over the certificate this connection was accepted with.
    private let authResponder: DeviceAuthResponder
    private var liveness: HeartbeatStateMachine
    private var context: ChannelHandlerContext?
    private var tick: Scheduled<Void>?
    private var peer = "?"
    /// Messages from the sender not yet delivered to the device (latency).
    private var inbound = MessageDelayLine<CastMessage>()
    private var inboundWake: Scheduled<Void>?
    /// Messages to the sender not yet written (latency).
    private var outbound = MessageDelayLine<CastMessage>()
    private var outboundWake: Scheduled<Void>?

    init(id: SenderConnectionID, device: SimulatedDevice, settings: SimulatorSettings, authResponder: DeviceAuthResponder) {
        self.id = id
        self.device = device
        self.authResponder = authResponder
        log = Logger(class: "ReceiverConnection", system: device.logSystem).with([
            "device": .string(device.configuration.uuid), "connection": .int(Int(id.rawValue)),
        ])
        liveness = HeartbeatStateMachine(pingInterval: settings.pingInterval, timeout: settings.heartbeatTimeout,
                                              now: MonotonicClock.seconds())
    }

    var channel: Channel? { context?.channel }
    var peerDescription: String { peer }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        peer = SocketAddress.logDescription(context.channel.remoteAddress)
        if context.channel.isActive { activate(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        activate(context: context)
        context.fireChannelActive()
    }

    private func activate(context: ChannelHandlerContext) {
        guard tick == nil else { return }
        log.info("sender connected from \(peer)", ["peer": .string(peer)])
        device.connectionOpened(self)
        scheduleHeartbeat(on: context.eventLoop)
    }

    /// One wake-up at the liveness machine's next deadline, on the heartbeat grid shared with the
    /// sender side (``CastHeartbeatHandler/nextWakeUp(for:now:loopNow:)``): a device with many
    /// connections wakes once per grid step for all that are due, not once per connection.
    private func scheduleHeartbeat(on loop: EventLoop) {
        let deadline = CastHeartbeatHandler.nextWakeUp(for: liveness, now: MonotonicClock.seconds(), loopNow: loop.now)
        tick = loop.scheduleTask(deadline: deadline) { [weak self] in
            self?.heartbeatTick()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        tick?.cancel()
        tick = nil
        // Messages still on their way are lost with the connection.
        inboundWake?.cancel()
        outboundWake?.cancel()
        inboundWake = nil
        outboundWake = nil
        inbound.removeAll()
        outbound.removeAll()
        log.info("sender disconnected (\(peer))", ["peer": .string(peer)])
        device.connectionClosed(id)
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        // Straight through without latency (and nothing still waiting, which would be overtaken).
        guard device.latency.isZero && inbound.isEmpty else {
            let now = MonotonicClock.seconds()
            inbound.append(message, now: now, delay: device.drawLatency())
            if inboundWake == nil { scheduleInboundWake(on: context.eventLoop) }
            return
        }
        deliver(message)
    }

    /// Handles one message from the sender now (on arrival, or when its latency is over).
    private func deliver(_ message: CastMessage) {
        liveness.inbound(now: MonotonicClock.seconds())
        switch message.namespace {
        case .heartbeat: heartbeat(message)
        case .deviceAuth: deviceAuth(message)
        default: device.received(message, from: id)
        }
    }

    private func heartbeat(_ message: CastMessage) {
        guard let text = message.payload.text, let json = try? JSONValue.parse(text) else {
            log.warning("heartbeat message without JSON ignored", ["source": .string(message.sourceID)])
            return
        }
        switch json["type"]?.string {
        case "PING":
            if device.faults.ignorePings {
                log.debug("PING ignored (fault: ignore-pings)", ["source": .string(message.sourceID)])
                return
            }
            send(CastMessage(sourceID: message.destinationID, destinationID: message.sourceID, namespace: .heartbeat,
                             payload: CastHeartbeatHandler.pongPayload))
        case "PONG":
            break
        default:
            log.warning("unknown heartbeat message \(text)", ["source": .string(message.sourceID)])
        }
    }

    private func deviceAuth(_ message: CastMessage) {
        guard case .binary(let bytes) = message.payload else {
            log.warning("device-auth message with a text payload ignored", ["source": .string(message.sourceID)])
            return
        }
        let reply = authResponder.reply(to: bytes)
        log.info("device-auth: \(reply.outcome)", ["source": .string(message.sourceID), "bytes": .int(reply.bytes.count)])
        send(CastMessage(sourceID: message.destinationID, destinationID: message.sourceID, namespace: .deviceAuth,
                         payload: .binary(reply.bytes)))
    }

    private func heartbeatTick() {
        guard let context else { return }
        switch liveness.tick(now: MonotonicClock.seconds()) {
        case .none:
            scheduleHeartbeat(on: context.eventLoop)
        case .sendPing:
            send(CastMessage(sourceID: "receiver-0", destinationID: "sender-0", namespace: .heartbeat,
                             payload: CastHeartbeatHandler.pingPayload))
            scheduleHeartbeat(on: context.eventLoop)
        case .timedOut(let silent):
            log.warning("sender silent for \(Int(silent)) s: closing the connection", [
                "peer": .string(peer), "silentSeconds": .double(silent),
            ])
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        switch error {
        case let error as CastMessageDecodingError:
            // The frame boundary is intact: the connection goes on (the codec logged it).
            device.recordFrameError("\(error)", connection: self)
        case let error as CastFrameError:
            device.recordFrameError("\(error)", connection: self)   // the frame decoder closes the channel
        case NIOSSLError.uncleanShutdown:
            // The sender closed TCP without a TLS close_notify: common (Python's ssl, many
            // senders) and harmless once the frames are complete; not bad input.
            log.debug("sender \(peer) closed without TLS close_notify", ["peer": .string(peer)])
            context.close(promise: nil)
        case is NIOSSLError, is BoringSSLError:
            // BoringSSLError: a record that does not decrypt or authenticate (BAD_DECRYPT,
            // BAD_RECORD_MAC), corrupted on the way or written by two threads of the sender at
            // once (seen with pychromecast under load). TLS allows nothing but closing.
            log.info("TLS failure from \(peer): \(error); closing", ["peer": .string(peer)])
            device.recordFrameError("TLS: \(error)", connection: self)
            context.close(promise: nil)
        default:
            log.info("connection error from \(peer): \(error); closing", ["peer": .string(peer)])
            context.close(promise: nil)
        }
    }

    // MARK: Latency (on the loop)

    private func scheduleInboundWake(on loop: EventLoop) {
        guard let due = inbound.nextDue else { return }
        inboundWake = loop.scheduleTask(in: Self.timeUntil(due)) { [weak self] in
            guard let self else { return }
            self.inboundWake = nil
            // Bounded: what is due now; messages arriving meanwhile wait for the next wake.
            for message in self.inbound.takeDue(by: MonotonicClock.seconds()) {
                guard self.context != nil else { return }
                self.deliver(message)
            }
            self.scheduleInboundWake(on: loop)
        }
    }

    private func scheduleOutboundWake(on loop: EventLoop) {
        guard let due = outbound.nextDue else { return }
        outboundWake = loop.scheduleTask(in: Self.timeUntil(due)) { [weak self] in
            guard let self else { return }
            self.outboundWake = nil
            let due = self.outbound.takeDue(by: MonotonicClock.seconds())
            for message in due { self.writeNow(message) }
            if !due.isEmpty { self.context?.flush() }
            self.scheduleOutboundWake(on: loop)
        }
    }

    /// From now to monotonic `due`, rounded up to the next microsecond so the wake is never
    /// early (an early wake finds nothing due and sleeps again).
    private static func timeUntil(_ due: Double) -> TimeAmount {
        let microseconds = ((due - MonotonicClock.seconds()) * 1e6).rounded(.up)
        return .microseconds(Int64(max(0, min(microseconds, 1e12))))
    }

    // MARK: Writing (on the loop)

    func send(_ message: CastMessage) {
        write(message)
        flush()
    }

    /// Queues a message until the next ``flush()``; under latency, until it is due (its wake
    /// writes and flushes it).
    func write(_ message: CastMessage) {
        guard let context, context.channel.isActive else { return }
        guard device.latency.isZero && outbound.isEmpty else {
            outbound.append(message, now: MonotonicClock.seconds(), delay: device.drawLatency())
            if outboundWake == nil { scheduleOutboundWake(on: context.eventLoop) }
            return
        }
        writeNow(message)
    }

    private func writeNow(_ message: CastMessage) {
        guard let context, context.channel.isActive else { return }
        context.write(wrapOutboundOut(message)).whenFailure { [log] error in
            log.warning("write failed: \(error)", ["namespace": .string(message.namespace.rawValue)])
        }
    }

    func flush() {
        context?.flush()
    }

    /// Writes raw bytes below the Cast codec, unframed, inside TLS (fault injection: malformed or
    /// oversized frames): from the frame decoder's context, the first Cast handler after TLS.
    func sendRaw(_ bytes: [UInt8]) {
        guard let channel = context?.channel,
              let below = try? channel.pipeline.syncOperations.context(handlerType: CastFrameDecoder.self) else { return }
        below.writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    func close(reason: String) -> EventLoopFuture<Void> {
        guard let context else { return device.loop.makeSucceededVoidFuture() }
        log.info("closing connection: \(reason)", ["peer": .string(peer), "reason": .string(reason)])
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.close(promise: promise)
        return promise.futureResult.recover { _ in }
    }

    func scheduleDrop(after seconds: Double) {
        device.loop.scheduleTask(in: .seconds(clamping: seconds)) { [weak self] in
            _ = self?.close(reason: "fault: drop after \(seconds) s")
        }
    }
}
