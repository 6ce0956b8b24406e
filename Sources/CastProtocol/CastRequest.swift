import CastCore
import Synchronization

/// One request to the device (LOAD, SEEK, GET_STATUS, a custom channel request…): awaitable,
/// cancellable, bounded by its timeout (default 10 s), failing with a typed ``CastRequestError``
/// (LOAD_FAILED with the detailed error code's name, INVALID_REQUEST with its reason,
/// INVALID_PLAYER_STATE, timed out, disconnected, superseded, cancelled).
///
/// Its connection's ``CastRequestHandler`` gives it its wire `requestId`, matches the reply and
/// completes it; the reply's payload becomes `Value` through the request's own mapping (a
/// MEDIA_STATUS entry, a RECEIVER_STATUS, a custom channel's JSON).
///
/// Completes exactly once. Thread-safe. Awaiting ``result`` from a task that is then cancelled
/// cancels the request.
public final class CastRequest<Value: Sendable>: CastReplyWaiter {
    /// The request `type` (`LOAD`, `SEEK`, …).
    public let type: String
    /// Seconds before it fails as ``CastRequestError/timedOut(after:)``.
    public let timeout: Double

    private struct State {
        var id = RequestID.unsolicited
        var result: Result<Value, CastRequestError>?
        var waiters: [CheckedContinuation<Result<Value, CastRequestError>, Never>] = []
        var onCancel: (@Sendable (RequestID) -> Void)?
        var wireTimes: WireTimes?
    }

    /// When the request was written and its reply read, on the connection's event loop
    /// (monotonic seconds, ``MonotonicClock``'s clock): the round trip without the caller's own
    /// scheduling, for measuring a device's delay (video walls).
    package struct WireTimes: Sendable, Equatable {
        package var written: Double
        package var answered: Double
    }

    private let state = Mutex(State())
    private let map: @Sendable (CastPayload) -> Result<Value, CastRequestError>

    /// `map` turns the reply's payload into the value (or a failure, for an unexpected reply).
    package init(type: String, timeout: Double, map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) {
        self.type = type
        self.timeout = timeout
        self.map = map
    }

    /// A request that failed before it was sent (not connected, no media session…).
    package static func failed(type: String, _ error: CastRequestError) -> CastRequest<Value> {
        let request = CastRequest(type: type, timeout: 0) { _ in .failure(error) }
        request.finish(.failure(error))
        return request
    }

    /// The wire `requestId`: 0 until the connection has sent it (and for a request that never
    /// reached the device).
    public var id: RequestID { state.withLock { $0.id } }

    /// Waits for the outcome.
    public var result: Result<Value, CastRequestError> {
        get async {
            if let done = state.withLock({ $0.result }) { return done }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let done: Result<Value, CastRequestError>? = state.withLock { state in
                        if let result = state.result { return result }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let done { continuation.resume(returning: done) }
                }
            } onCancel: {
                self.cancel()
            }
        }
    }

    /// Waits for the outcome and returns the value or throws the typed failure.
    public func value() async throws(CastRequestError) -> Value {
        try await result.get()
    }

    /// The round trip on the wire, once a reply came (nil for a request that failed or got none).
    package var wireTimes: WireTimes? { state.withLock { $0.wireTimes } }

    /// The outcome if the request has completed.
    public var completedResult: Result<Value, CastRequestError>? { state.withLock { $0.result } }

    /// Gives up waiting: the request fails as ``CastRequestError/cancelled`` (a late reply is ignored).
    public func cancel() {
        let (id, onCancel) = state.withLock { ($0.id, $0.onCancel) }
        guard finish(.failure(.cancelled)) else { return }
        onCancel?(id)
    }

    // MARK: CastReplyWaiter

    package func sent(as id: RequestID, onCancel: @escaping @Sendable (RequestID) -> Void) {
        state.withLock { state in
            state.id = id
            state.onCancel = onCancel
        }
    }

    package func complete(with reply: Result<CastPayload, CastRequestError>) {
        finish(reply.flatMap(map))
    }

    package func answered(written: Double, at answered: Double) {
        state.withLock { $0.wireTimes = WireTimes(written: written, answered: answered) }
    }

    /// Sets the outcome once; false when it was already set.
    @discardableResult
    private func finish(_ result: Result<Value, CastRequestError>) -> Bool {
        let waiters: [CheckedContinuation<Result<Value, CastRequestError>, Never>]? = state.withLock { state in
            guard state.result == nil else { return nil }
            state.result = result
            state.onCancel = nil
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        return true
    }
}

/// What a ``CastRequestHandler`` completes: a request whatever its value type.
package protocol CastReplyWaiter: AnyObject, Sendable {
    /// The request went out with `id`; `onCancel` tells the connection when the caller gives up.
    func sent(as id: RequestID, onCancel: @escaping @Sendable (RequestID) -> Void)
    /// The reply's payload, or why there is none. Only the first call counts.
    func complete(with reply: Result<CastPayload, CastRequestError>)
    /// The reply to what was written at `written` was read at `answered` (before ``complete(with:)``).
    func answered(written: Double, at answered: Double)
}
