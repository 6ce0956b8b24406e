import CastCore
import CastProtocol
import Synchronization

/// One request to the device (LOAD, SEEK, GET_STATUS, a custom channel request…): awaitable,
/// cancellable, bounded by its timeout (default 10 s), failing with a typed ``CastRequestError``
/// (LOAD_FAILED with the detailed error code's name, INVALID_REQUEST with its reason,
/// INVALID_PLAYER_STATE, timed out, disconnected, superseded, cancelled).
///
/// Completes exactly once. Thread-safe. Awaiting ``result`` from a task that is then cancelled
/// cancels the request.
public final class CastRequest<Value: Sendable>: Sendable {
    /// The wire `requestId` (0 when the request never reached the device).
    public let id: RequestID
    /// The request `type` (`LOAD`, `SEEK`, …).
    public let type: String
    /// Seconds before it fails as ``CastRequestError/timedOut(after:)``.
    public let timeout: Double

    private struct State {
        var result: Result<Value, CastRequestError>?
        var waiters: [CheckedContinuation<Result<Value, CastRequestError>, Never>] = []
    }

    private let state = Mutex(State())
    private let onCancel: @Sendable (RequestID) -> Void

    init(id: RequestID, type: String, timeout: Double, onCancel: @escaping @Sendable (RequestID) -> Void) {
        self.id = id
        self.type = type
        self.timeout = timeout
        self.onCancel = onCancel
    }

    /// A request that failed before it was sent (not connected, no media session…).
    static func failed(type: String, _ error: CastRequestError) -> CastRequest<Value> {
        let request = CastRequest(id: .unsolicited, type: type, timeout: 0, onCancel: { _ in })
        request.complete(.failure(error))
        return request
    }

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

    /// The outcome if the request has completed.
    public var completedResult: Result<Value, CastRequestError>? { state.withLock { $0.result } }

    /// Gives up waiting: the request fails as ``CastRequestError/cancelled`` (a late reply is ignored).
    public func cancel() {
        if complete(.failure(.cancelled)) { onCancel(id) }
    }

    /// Sets the outcome once; false when it was already set.
    @discardableResult
    func complete(_ result: Result<Value, CastRequestError>) -> Bool {
        let waiters: [CheckedContinuation<Result<Value, CastRequestError>, Never>]? = state.withLock { state in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        return true
    }
}

/// What the request tracker resumes: the typed request behind a payload-level callback.
struct RequestSink: Sendable {
    /// The connection generation the request went out on.
    let generation: Int
    let complete: @Sendable (Result<CastPayload, CastRequestError>) -> Void
}
