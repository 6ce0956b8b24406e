import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Requests and their correlation, timeouts and failures.
extension CastSession {
    // MARK: - Requests

    /// The connection to send on, or why there is none: not connected, or the session is moving
    /// to another device and this is not one of its own requests (``movingRequest``).
    func usableConnection() -> Result<CastConnection, CastRequestError> {
        guard let connection, connection.isActive else {
            return .failure(.disconnected("not connected (session \(machine.state.name))"))
        }
        if transferring, !Self.movingRequest, case .connected = machine.state {
            return .failure(.disconnected("the session is moving to another device"))
        }
        return .success(connection)
    }

    /// Sends a request and tracks its reply. Fails at once when there is no connection.
    func request<Value: Sendable>(namespace: CastNamespace, destination: EndpointID, type: String, timeout: Double?,
                                  supersedes: Bool = false, build: @Sendable (RequestID) -> JSONValue,
                                  map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) -> CastRequest<Value> {
        let connection: CastConnection
        switch usableConnection() {
        case .success(let usable): connection = usable
        case .failure(let error): return .failed(type: type, error)
        }
        let seconds = timeout ?? options.requestTimeout
        let box = RequestBox<Value>()
        let (id, superseded) = tracker.begin(namespace: namespace, type: type, timeout: seconds, now: MonotonicClock.seconds(),
                                              waiter: RequestSink(generation: generation) { result in box.complete(result.flatMap(map)) },
                                              supersedes: supersedes)
        let request = CastRequest<Value>(id: id, type: type, timeout: seconds) { [weak self] id in
            Task { await self?.forget(id) }
        }
        box.request = request
        for completion in superseded { finish(completion) }
        let json = build(id)
        let message = CastMessage(source: options.senderID, destination: destination.rawValue, namespace: namespace, json: json)
        log.debug("→ \(type) request \(id.rawValue)", ["requestId": .int(id.rawValue), "type": .string(type),
                                                        "namespace": .string(namespace.rawValue)])
        // Queued now, in call order (a LOAD then a PLAY reach the device in that order).
        connection.enqueue(message) { [weak self] error in
            guard let error, let self else { return }
            Task { await self.failRequest(id, .disconnected("\(error)")) }
        }
        if seconds.isFinite { armExpiry(at: MonotonicClock.seconds() + max(seconds, 0)) }
        return request
    }

    /// One timer per session for every request's timeout: armed for the earliest deadline
    /// (a request with a shorter timeout than those pending re-arms it sooner); when it fires,
    /// what is due fails with `timedOut` and it is armed again for the next pending deadline.
    ///
    /// The timer is an event-loop task, not a sleeping `Task`: arming one costs a heap insert on
    /// a loop, where a `Task` with `Task.sleep` cost a task, a pool thread woken to run it and
    /// dispatch's timer thread woken to schedule it — per session, in every start.
    func armExpiry(at deadline: Double) {
        guard deadline < expiryDeadline else { return }
        expiryTimer?.cancel()
        expiryDeadline = deadline
        let left = max(0, deadline - MonotonicClock.seconds())
        // The loop's clock and MonotonicClock both leave out suspended time; a fire that is early
        // anyway finds nothing due and re-arms for what is left (``expiryFired(_:)``).
        expiryTimer = loop.scheduleTask(in: .nanoseconds(Int64(min(left, 86_400 * 365) * 1e9) + 1_000_000)) { [weak self] in
            guard let self else { return }
            Task { await self.expiryFired(deadline) }
        }
    }

    func expiryFired(_ deadline: Double) {
        // A timer re-armed sooner in the meantime owns the schedule now.
        guard deadline == expiryDeadline else { return }
        expiryTimer = nil
        expiryDeadline = .infinity
        expireRequests()
        if let next = tracker.nextDeadline { armExpiry(at: next) }
    }

    /// Sends a message that expects no reply.
    func send(namespace: CastNamespace, destination: EndpointID, payload: CastMessage.Payload) async throws(CastRequestError) {
        let connection = try usableConnection().get()
        do {
            try await connection.send(CastMessage(sourceID: options.senderID, destinationID: destination.rawValue,
                                                  namespace: namespace, payload: payload))
        } catch {
            throw .disconnected("\(error)")
        }
    }

    func finish(_ completion: RequestTracker<RequestSink>.Completion) {
        let request = completion.request
        let latency = Int((MonotonicClock.seconds() - request.sentAt) * 1000)
        var fields: LogFields = ["requestId": .int(request.id.rawValue), "type": .string(request.type),
                                 "namespace": .string(request.namespace.rawValue), "latencyMs": .int(latency)]
        if let app = application { fields["session"] = .string(app.sessionId) }
        switch completion.result {
        case .success:
            log.debug("← \(request.type) request \(request.id.rawValue) answered in \(latency) ms", fields)
        case .failure(let error):
            fields["error"] = .string("\(error)")
            log.warning("\(request.type) request \(request.id.rawValue) failed: \(error)", fields)
        }
        completion.request.waiter.complete(completion.result)
    }

    func failRequest(_ id: RequestID, _ error: CastRequestError) {
        guard let completion = tracker.fail(id, with: error) else { return }
        finish(completion)
    }

    func forget(_ id: RequestID) {
        _ = tracker.cancel(id)
    }

    func expireRequests() {
        for completion in tracker.expire(now: MonotonicClock.seconds()) { finish(completion) }
    }

    func failPending(_ why: String) {
        for completion in tracker.disconnect(why) { finish(completion) }
    }

    /// Fails the requests that went out on connection `generation` (one that is no longer the
    /// current connection, e.g. the old device's after a transfer).
    func failPending(onGeneration ended: Int, _ why: String) {
        for request in tracker.waiting where request.waiter.generation == ended {
            if let completion = tracker.fail(request.id, with: .disconnected(why)) { finish(completion) }
        }
    }
}

/// Holds the typed request for the tracker's callback (set right after the id is known).
final class RequestBox<Value: Sendable>: @unchecked Sendable {
    // Written once on the session's executor before any reply can be handled there.
    var request: CastRequest<Value>?

    func complete(_ result: Result<Value, CastRequestError>) {
        request?.complete(result)
    }
}
