import CastCore

/// A message from the device as a ``CastRequestHandler`` hands it on: the message, its decoded
/// payload, and the request it answers when that request completes after delivery.
///
/// The consumer calls ``completeReply()`` once it has applied what the payload says (a
/// RECEIVER_STATUS to the device status, a MEDIA_STATUS to the media client): the request's
/// awaiter then finds that state already updated.
public struct CastInbound: Sendable {
    public let message: CastMessage
    /// The payload decoded for its namespace: the built-in namespaces' models, ``CastPayload/custom(_:)``
    /// JSON for the others. Nil for a binary payload, or text that does not decode (logged by the handler).
    public let payload: CastPayload?
    /// The request this message answers, when it completes after delivery
    /// (``CastRequestSpec/completesAfterDelivery``); nil for everything else.
    public let reply: CastReply?

    public init(message: CastMessage, payload: CastPayload?, reply: CastReply? = nil) {
        self.message = message
        self.payload = payload
        self.reply = reply
    }

    /// Completes the request this message answers (nothing when it answers none).
    public func completeReply() {
        reply?.complete()
    }
}

/// A matched reply: the request and its outcome (the payload, or the failure the device reported).
public struct CastReply: Sendable {
    let waiter: any CastReplyWaiter
    public let result: Result<CastPayload, CastRequestError>

    init(waiter: any CastReplyWaiter, result: Result<CastPayload, CastRequestError>) {
        self.waiter = waiter
        self.result = result
    }

    func complete() {
        waiter.complete(with: result)
    }
}
