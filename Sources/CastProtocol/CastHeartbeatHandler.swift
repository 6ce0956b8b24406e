import CastCore
import CastLogging
import NIOCore

/// The peer went silent for longer than the heartbeat timeout; the channel is being closed.
public struct CastHeartbeatTimeout: Error, Sendable, Equatable, CustomStringConvertible {
    /// Seconds without any inbound message.
    public let silentFor: Double
    /// The configured timeout.
    public let timeout: Double

    public var description: String {
        "no message from the peer for \(Self.oneDecimal(silentFor)) s (heartbeat timeout \(timeout) s)"
    }

    /// `value` rounded to tenths, e.g. `10.3` (`String(format: "%.1f")` without Foundation).
    static func oneDecimal(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        let tenths = Int64((abs(value) * 10).rounded())
        return "\(value < 0 && tenths > 0 ? "-" : "")\(tenths / 10).\(tenths % 10)"
    }
}

/// The heartbeat namespace of a sender connection, after the message codec: answers PING with
/// PONG, PINGs the device once it has been silent for the ping interval, and when it stays
/// silent past the timeout fires ``CastHeartbeatTimeout`` and closes the channel. Heartbeat
/// messages stop here; every other message passes on. Outbound messages pass through (sending
/// is not a sign of the peer's life). Logic in ``HeartbeatStateMachine``.
public final class CastHeartbeatHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = CastMessage
    public typealias InboundOut = CastMessage
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = CastMessage

    private var machine: HeartbeatStateMachine
    private let senderID: String
    private let log: Logger
    private let clock: @Sendable () -> Double
    private var task: Scheduled<Void>?
    private var stopped = false

    /// - Parameters:
    ///   - senderID: the `source_id` of our PINGs (the receiver answers to it).
    ///   - clock: monotonic seconds (tests pass their own).
    public init(pingInterval: Double = 5, timeout: Double = 10, senderID: String = "sender-0",
                logSystem: LogSystem = .shared, clock: @escaping @Sendable () -> Double = { MonotonicClock.seconds() }) {
        self.clock = clock
        machine = HeartbeatStateMachine(pingInterval: pingInterval, timeout: timeout, now: clock())
        self.senderID = senderID
        log = Logger(class: "CastHeartbeat", system: logSystem)
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) { stop() }

    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard task == nil, !stopped else { return }
        machine.inbound(now: clock())
        schedule(context)
    }

    /// Wake-ups fall on this grid (nanoseconds of the loop's monotonic clock), so the heartbeats
    /// of a loop's connections that are due within one step run in one wake-up of the loop.
    public static let wakeUpGrid: UInt64 = 100_000_000

    /// The deadline `delay` seconds from `now`, rounded up to the next ``wakeUpGrid`` step: at
    /// most 100 ms late, which a 5 s interval and a 10 s timeout do not notice.
    public static func gridDeadline(now: NIODeadline, delay: Double) -> NIODeadline {
        let due = now + .seconds(clamping: delay)
        let nanos = due.uptimeNanoseconds
        let (steps, remainder) = nanos.quotientAndRemainder(dividingBy: wakeUpGrid)
        return remainder == 0 ? due : .uptimeNanoseconds((steps + 1) * wakeUpGrid)
    }

    /// When a loop should next wake for `machine` (not a periodic tick: with many connections a
    /// timer per connection per second dominates idle CPU): its next deadline, `now` being the
    /// machine's clock, on the shared grid of the loop's clock `loopNow`. A fleet's connections,
    /// started together, come due together, and each loop then wakes once per grid step for all
    /// of them instead of once per connection. Both ends of a connection schedule with this.
    public static func nextWakeUp(for machine: HeartbeatStateMachine, now: Double, loopNow: NIODeadline) -> NIODeadline {
        gridDeadline(now: loopNow, delay: max(0.001, min(machine.nextTick - now, 3600)))
    }

    private func schedule(_ context: ChannelHandlerContext) {
        // Handler and context are only touched on the channel's loop, where the task runs.
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        task = context.eventLoop.scheduleTask(deadline: Self.nextWakeUp(for: machine, now: clock(), loopNow: context.eventLoop.now)) {
            let (handler, context) = bound.value
            handler.task = nil
            handler.tick(context)
        }
    }

    private func stop() {
        stopped = true
        task?.cancel()
        task = nil
    }

    func tick(_ context: ChannelHandlerContext) {
        guard !stopped else { return }
        switch machine.tick(now: clock()) {
        case .none:
            schedule(context)
        case .sendPing:
            log.verbose("PING (peer silent for \(machine.pingInterval) s)", ["peer": .string(Self.peer(context))])
            let ping = CastMessage(sourceID: senderID, destinationID: EndpointID.receiver0.rawValue, namespace: .heartbeat,
                                   payload: Self.pingPayload)
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
            schedule(context)
        case .timedOut(let silent):
            let error = CastHeartbeatTimeout(silentFor: silent, timeout: machine.timeout)
            log.warning("closing connection to \(Self.peer(context)): \(error)", [
                "peer": .string(Self.peer(context)), "silentSeconds": .double(silent), "timeout": .double(machine.timeout),
            ])
            stop()
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        machine.inbound(now: clock())
        guard message.namespace == .heartbeat else {
            context.fireChannelRead(data)
            return
        }
        switch message.payload.text.flatMap({ try? JSONValue.parse($0) })?["type"]?.string {
        case "PING":
            let pong = CastMessage(sourceID: senderID, destinationID: message.sourceID, namespace: .heartbeat,
                                   payload: Self.pongPayload)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case "PONG":
            break
        default:
            log.warning("unexpected heartbeat message ignored: \(message.payload.text ?? "binary payload")", [
                "peer": .string(Self.peer(context)), "source": .string(message.sourceID),
            ])
        }
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
    }

    /// Closing: no more PINGs or timeouts while TLS waits for the peer's close_notify.
    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all { stop() }
        context.close(mode: mode, promise: promise)
    }

    /// `{"type":"PING"}` and `{"type":"PONG"}`, serialized once (the simulator's device side
    /// sends the same).
    public static let pingPayload = CastMessage.Payload.string(JSONValue.object(["type": "PING"]).serialized())
    public static let pongPayload = CastMessage.Payload.string(JSONValue.object(["type": "PONG"]).serialized())

    static func peer(_ context: ChannelHandlerContext) -> String {
        SocketAddress.logDescription(context.channel.remoteAddress)
    }
}
