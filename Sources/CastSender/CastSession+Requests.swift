import CastCore
import CastLogging
import CastProtocol
import CastTransport

/// Requests go out on the current connection, whose ``CastRequestHandler`` numbers them, matches
/// their replies and times them out; the session only chooses the connection and the destination.
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

    /// Sends a request on the current connection; fails at once when there is none.
    /// `timeout` nil: ``CastOptions/requestTimeout``.
    func request<Value: Sendable>(namespace: CastNamespace, destination: EndpointID, type: String, timeout: Double?,
                                  supersedes: Bool = false, build: @escaping @Sendable (RequestID) -> JSONValue,
                                  map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) -> CastRequest<Value> {
        switch usableConnection() {
        case .failure(let error):
            return .failed(type: type, error)
        case .success(let connection):
            // The reader applies a reply's status before the request completes (``handle(_:generation:)``).
            return connection.request(source: options.senderID, destination: destination.rawValue, namespace: namespace, type: type,
                                      timeout: timeout ?? options.requestTimeout, supersedes: supersedes, afterDelivery: true,
                                      build: build, map: map)
        }
    }

    /// A request to the joined app on `namespace` (the media namespace, a custom channel); fails
    /// at once when no app is joined. `build` gets the request id and the app's session id.
    func appRequest<Value: Sendable>(namespace: CastNamespace, type: String, timeout: Double?, supersedes: Bool = false,
                                     build: @escaping @Sendable (RequestID, String?) -> JSONValue,
                                     map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) -> CastRequest<Value> {
        guard let transport = appTransport else {
            return .failed(type: type, .disconnected("no app joined (session \(state.name))"))
        }
        let appSessionID = application?.sessionID
        return request(namespace: namespace, destination: transport, type: type, timeout: timeout, supersedes: supersedes,
                       build: { build($0, appSessionID) }, map: map)
    }

    /// A receiver (platform) request whose reply is a RECEIVER_STATUS.
    func receiverStatusRequest(type: String, timeout: Double? = nil,
                               _ build: @escaping @Sendable (RequestID) -> ReceiverMessage) -> CastRequest<ReceiverStatus> {
        request(namespace: .receiver, destination: .receiver0, type: type, timeout: timeout, build: { build($0).json },
                map: Self.receiverStatusReply)
    }

    /// A RECEIVER_STATUS reply, or the unexpected reply as an error.
    @Sendable static func receiverStatusReply(_ payload: CastPayload) -> Result<ReceiverStatus, CastRequestError> {
        if case .receiver(.receiverStatus(_, let status)) = payload { return .success(status) }
        return .failure(.deviceError(nil, ErrorReason(rawValue: "unexpected reply \(payload.typeName ?? "?")")))
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

    /// Queues a message that expects no reply on the connection in use now, without a hop onto
    /// the actor, and returns at once: messages queued one after another from one thread go out
    /// in that order (``CastConnection/enqueue(_:flush:completion:)``, one event loop, first in
    /// first out). `completion` gets nil once written, or the error. Nil when queued; else why
    /// not: the session has ended, it is not connected, or it is moving to another device (as
    /// ``usableConnection()`` decides for a request that is not the move's own).
    nonisolated func enqueue(namespace: CastNamespace, destination: EndpointID, payload: CastMessage.Payload,
                             completion: (@Sendable (CastTransportError?) -> Void)? = nil) -> CastRequestError? {
        let (connection, refusal) = presence.withLock { p -> (CastConnection?, CastRequestError?) in
            if p.hasEnded { return (nil, .disconnected("the session has ended")) }
            guard let connection = p.connection, connection.isActive else { return (nil, .disconnected("not connected")) }
            if p.transferring { return (nil, .disconnected("the session is moving to another device")) }
            return (connection, nil)
        }
        guard let connection else { return refusal }
        connection.enqueue(CastMessage(sourceID: options.senderID, destinationID: destination.rawValue, namespace: namespace, payload: payload),
                           completion: completion)
        return nil
    }

    /// The app's transportId, for channels and the media client.
    var appTransport: EndpointID? { application?.transport }
}
