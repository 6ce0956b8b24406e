import CastCore
import CastLogging
import NIOCore

/// Hears a request's outcome: its type, the seconds it took, and its failure (nil: answered).
public typealias CastRequestObserver = @Sendable (_ type: String, _ seconds: Double, _ failure: CastRequestError?) -> Void

/// Request correlation for one connection, the only place where requests meet their replies.
///
/// Outbound, a ``CastOutbound/request(_:)`` is numbered (``RequestTracker``), registered with its
/// deadline and sent; a plain ``CastOutbound/message(_:)`` passes. Inbound, a built-in
/// namespace's text payload is decoded once for its namespace and handed on as a ``CastInbound``;
/// a custom namespace's text is parsed only while a request on it waits (its reader, a channel
/// plugin or ``CastInbound/message``'s consumer, parses it itself: parsed once); a reply
/// completes its request, or travels with the message for the consumer to complete after
/// applying it (``CastRequestSpec/completesAfterDelivery``). Requests fail
/// here: timed out (one timer per connection, armed for the earliest deadline), superseded, not
/// written, cancelled, or left when the connection ends (with the ``CastConnectionEnded`` reason).
///
/// Time is the event loop's clock, so an `EmbeddedEventLoop` drives the timeouts in tests.
/// Place it after ``CastHeartbeatHandler``. Loop-confined.
public final class CastRequestHandler: ChannelDuplexHandler {
    public typealias InboundIn = CastMessage
    public typealias InboundOut = CastInbound
    public typealias OutboundIn = CastOutbound
    public typealias OutboundOut = CastMessage

    private var tracker = RequestTracker<any CastReplyWaiter>()
    private let log: Logger
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    private var endReason: CastConnectionCloseReason?

    private let observer: CastRequestObserver?

    /// `logFields` go on every record (the device, the session); `observer` hears every outcome.
    public init(logSystem: LogSystem = .shared, logFields: LogFields = [:], observer: CastRequestObserver? = nil) {
        log = Logger(class: "CastRequestHandler", system: logSystem).with(logFields)
        self.observer = observer
    }

    /// Requests waiting for a reply.
    public var pendingCount: Int { tracker.waiting.count }

    // MARK: Outbound

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .message(let message):
            context.write(wrapOutboundOut(message), promise: promise)
        case .request(let spec):
            send(spec, context: context, promise: promise)
        }
    }

    private func send(_ spec: CastRequestSpec, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        if let endReason {
            spec.fail(.disconnected("\(endReason)"))
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        let now = Self.seconds(context.eventLoop.now)
        let (id, superseded) = tracker.begin(namespace: spec.namespace, type: spec.type, timeout: spec.timeout, now: now,
                                             waiter: spec.waiter, supersedes: spec.supersedes,
                                             completesAfterDelivery: spec.completesAfterDelivery, destination: spec.destinationID)
        let loop = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        spec.waiter.sent(as: id) { id in eventLoop.execute { loop.value.cancelled(id) } }
        log.debug("→ \(spec.type) request \(id.rawValue)", [
            "requestId": .int(id.rawValue), "type": .string(spec.type), "namespace": .string(spec.namespace.rawValue),
        ])
        for completion in superseded { finish(completion, now: now) }
        let message = CastMessage(source: spec.sourceID, destination: spec.destinationID, namespace: spec.namespace,
                                  json: spec.build(id))
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.whenFailure { error in loop.value.notWritten(id, error) }
        context.write(wrapOutboundOut(message), promise: written)
        if spec.timeout.isFinite { arm(at: Self.deadline(now + max(spec.timeout, 0)), context: context) }
    }

    private func notWritten(_ id: RequestID, _ error: Error) {
        guard let completion = tracker.fail(id, with: .disconnected("\(error)")) else { return }
        finish(completion, now: completion.request.sentAt)
    }

    private func cancelled(_ id: RequestID) {
        // The request already holds `.cancelled`; only the bookkeeping is left.
        _ = tracker.cancel(id)
    }

    // MARK: Inbound

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        var payload: CastPayload?
        if case .string(let text) = message.payload, Self.decoded.contains(message.namespace) || tracker.isWaiting(on: message.namespace) {
            do {
                payload = try CastPayload.decode(namespace: message.namespace, utf8: text)
            } catch {
                // A custom namespace may carry any text; the built-in ones must decode.
                if Self.modelled.contains(message.namespace) {
                    log.warning("undecodable payload from \(message.sourceID) ignored: \(error)", [
                        "namespace": .string(message.namespace.rawValue), "source": .string(message.sourceID),
                    ])
                }
            }
        }
        var reply: CastReply?
        if let payload, let completion = tracker.reply(payload, on: message.namespace) {
            let now = Self.seconds(context.eventLoop.now)
            completion.request.waiter.answered(written: completion.request.sentAt, at: now)
            if completion.request.completesAfterDelivery {
                logOutcome(completion, now: now)
                reply = CastReply(waiter: completion.request.waiter, result: completion.result)
            } else {
                finish(completion, now: now)
            }
        }
        context.fireChannelRead(wrapInboundOut(CastInbound(message: message, payload: payload, reply: reply)))
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let ended = event as? CastConnectionEnded { end(ended.reason) }
        context.fireUserInboundEventTriggered(event)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        end(endReason ?? .error("the connection closed"))
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    /// Fails every pending request with `error` (the session behind them ended, say); the
    /// connection stays.
    public func failAll(_ error: CastRequestError) {
        for request in tracker.waiting {
            if let completion = tracker.fail(request.id, with: error) { finish(completion, now: completion.request.sentAt) }
        }
    }

    /// Fails the pending requests sent to `destination` (an app that stopped) with `error`; the
    /// others and the connection stay.
    public func failAll(to destination: String, _ error: CastRequestError) {
        for completion in tracker.fail(destination: destination, with: error) { finish(completion, now: completion.request.sentAt) }
    }

    /// Fails everything pending once: nothing more can be answered.
    private func end(_ reason: CastConnectionCloseReason) {
        guard endReason == nil else { return }
        endReason = reason
        timer?.cancel()
        timer = nil
        timerDeadline = nil
        for completion in tracker.disconnect("\(reason)") { finish(completion, now: completion.request.sentAt) }
    }

    // MARK: Timeouts

    /// One timer for every request: armed for the earliest deadline (a request with a shorter
    /// timeout than those pending re-arms it sooner); when it fires, what is due fails as timed
    /// out and it is armed again for the next deadline.
    private func arm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        if let armed = timerDeadline, armed <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let loop = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        timer = context.eventLoop.scheduleTask(deadline: deadline) { loop.value.expire(on: eventLoop) }
    }

    private func expire(on eventLoop: EventLoop) {
        timer = nil
        timerDeadline = nil
        let now = Self.seconds(eventLoop.now)
        for completion in tracker.expire(now: now) { finish(completion, now: now) }
        guard let next = tracker.nextDeadline, endReason == nil else { return }
        let loop = NIOLoopBound(self, eventLoop: eventLoop)
        timerDeadline = Self.deadline(next)
        timer = eventLoop.scheduleTask(deadline: Self.deadline(next)) { loop.value.expire(on: eventLoop) }
    }

    // MARK: Completions

    /// Completes a request that fails here (nothing to apply first).
    private func finish(_ completion: RequestTracker<any CastReplyWaiter>.Completion, now: Double) {
        logOutcome(completion, now: now)
        completion.request.waiter.complete(with: completion.result)
    }

    private func logOutcome(_ completion: RequestTracker<any CastReplyWaiter>.Completion, now: Double) {
        let request = completion.request
        let latency = Int(((now - request.sentAt) * 1000).rounded())
        if let observer {
            if case .failure(let error) = completion.result { observer(request.type, max(0, now - request.sentAt), error) } else {
                observer(request.type, max(0, now - request.sentAt), nil)
            }
        }
        var fields: LogFields = ["requestId": .int(request.id.rawValue), "type": .string(request.type),
                                 "namespace": .string(request.namespace.rawValue), "latencyMs": .int(latency)]
        switch completion.result {
        case .success:
            log.debug("← \(request.type) request \(request.id.rawValue) answered in \(latency) ms", fields)
        case .failure(.cancelled):
            log.debug("\(request.type) request \(request.id.rawValue) cancelled", fields)
        case .failure(let error):
            fields["error"] = .string("\(error)")
            log.warning("\(request.type) request \(request.id.rawValue) failed: \(error)", fields)
        }
    }

    /// The namespaces whose payloads decode to models (the others are free-form JSON or text).
    private static let modelled: Set<CastNamespace> = [.connection, .receiver, .media]
    /// The namespaces whose payloads are always decoded: the modelled ones and the heartbeat.
    private static let decoded: Set<CastNamespace> = [.connection, .receiver, .media, .heartbeat]

    static func seconds(_ deadline: NIODeadline) -> Double { Double(deadline.uptimeNanoseconds) / 1e9 }

    static func deadline(_ seconds: Double) -> NIODeadline {
        .uptimeNanoseconds(UInt64(min(max(seconds, 0), 9e9) * 1e9))
    }
}
