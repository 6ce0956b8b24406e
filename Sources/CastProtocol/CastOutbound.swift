import CastCore

/// What is written into a connection above its ``CastRequestHandler``: a message as it is, or a
/// request that the handler numbers, registers and sends.
public enum CastOutbound: Sendable {
    case message(CastMessage)
    case request(CastRequestSpec)
}

/// A request before it has a `requestId`: where it goes, how long its reply may take, how its
/// payload is built once numbered, and who waits for it.
public struct CastRequestSpec: Sendable {
    public var sourceID: String
    public var destinationID: String
    public var namespace: CastNamespace
    /// The request `type` (LOAD, GET_STATUS, …), for logs and supersession.
    public var type: String
    /// Seconds; `.infinity` for none.
    public var timeout: Double
    /// A newer request of the same namespace and type that also supersedes fails this one as
    /// ``CastRequestError/superseded(by:)`` (a second LOAD before the first answered).
    public var supersedes: Bool
    /// The payload with the request's id in it.
    public var build: @Sendable (RequestID) -> JSONValue
    /// The reply travels with its message (``CastInbound/reply``) and the consumer completes the
    /// request once it has applied what the reply carries; otherwise the handler completes it
    /// as the reply arrives.
    public var completesAfterDelivery: Bool
    let waiter: any CastReplyWaiter

    /// `request` is completed with the reply, or with why there is none.
    public init<Value>(sourceID: String, destinationID: String, namespace: CastNamespace, type: String, timeout: Double,
                       supersedes: Bool = false, completesAfterDelivery: Bool = false, request: CastRequest<Value>,
                       build: @escaping @Sendable (RequestID) -> JSONValue) {
        self.completesAfterDelivery = completesAfterDelivery
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.type = type
        self.timeout = timeout
        self.supersedes = supersedes
        self.build = build
        self.waiter = request
    }

    /// Fails the request without sending it.
    func fail(_ error: CastRequestError) {
        waiter.complete(with: .failure(error))
    }
}
