import CastCore
import CastLogging
import CastProtocol
import CastTransport
import Synchronization

/// A custom namespace channel on a session (GCKGenericChannel): text or binary messages to the
/// app and back. It sees only its own namespace. Add it with ``CastSession/add(_:)``; it keeps
/// working across reconnects. Thread-safe.
public final class GenericChannel: Sendable {
    /// One message from the app.
    public struct Message: Sendable, Equatable {
        /// The app's transportId (or receiver-0).
        public var source: String
        public var payload: CastMessage.Payload
    }

    public let namespace: CastNamespace
    private let session = Mutex<WeakSession>(WeakSession())
    private let fanout: EventFanout<Message>
    private let handler: (@Sendable (Message) -> Void)?

    /// `handler` is called for every message on the namespace (besides ``messages()``), on the
    /// session's event loop thread: keep it short and never block (the loop's connections wait),
    /// or consume ``messages()`` from a task of your own.
    public init(namespace: CastNamespace, handler: (@Sendable (Message) -> Void)? = nil) {
        self.namespace = namespace
        self.handler = handler
        fanout = EventFanout("messages on \(namespace.rawValue)")
    }

    /// `log`: the session's logger, where a subscriber that falls behind is reported.
    func attach(_ session: CastSession, log: Logger) {
        self.session.withLock { $0.value = session }
        fanout.report(to: log)
    }

    /// Every message from now on.
    public func messages() -> AsyncStream<Message> { fanout.stream() }

    func deliver(_ message: CastMessage) {
        let delivered = Message(source: message.sourceID, payload: message.payload)
        handler?(delivered)
        fanout.emit(delivered)
    }

    /// Sends text (usually JSON) to the app.
    public func send(text: String) async throws(CastRequestError) {
        try await send(.string(text))
    }

    /// Sends bytes to the app (`payload_binary`).
    public func send(binary: [UInt8]) async throws(CastRequestError) {
        try await send(.binary(binary))
    }

    /// Where a message goes: the joined app (its transportId when the message is sent), or the
    /// receiver platform, `receiver-0` (for the platform's own namespaces, such as multizone).
    public enum Destination: Sendable, Equatable {
        case app
        case receiver
    }

    /// Sends text (usually JSON) to `destination`.
    public func send(text: String, to destination: Destination) async throws(CastRequestError) {
        try await send(.string(text), to: destination)
    }

    /// Queues text for `destination` and returns at once, without awaiting the session: texts
    /// queued one after another from one thread go out in that order (the connection's ordered
    /// enqueue). The app's transportId is the one the session has joined when this is called.
    /// `completion` gets nil once written, or the error. Throws when nothing can take it now (no
    /// session, no app joined, not connected).
    public func enqueue(text: String, to destination: Destination, completion: (@Sendable (_ failure: (any Error)?) -> Void)? = nil) throws(CastRequestError) {
        guard let session = session.withLock({ $0.value }) else { throw .disconnected("the channel is not on a session") }
        let endpoint: EndpointID
        switch destination {
        case .app:
            guard let transport = session.currentAppTransportID else { throw .disconnected("no app joined") }
            endpoint = EndpointID(rawValue: transport)
        case .receiver:
            endpoint = .receiver0
        }
        var written: (@Sendable (CastTransportError?) -> Void)?
        if let completion { written = { @Sendable (error: CastTransportError?) in completion(error) } }
        if let refusal = session.enqueue(namespace: namespace, destination: endpoint, payload: .string(text), completion: written) { throw refusal }
    }

    private func send(_ payload: CastMessage.Payload, to destination: Destination = .app) async throws(CastRequestError) {
        guard let session = session.withLock({ $0.value }) else { throw .disconnected("the channel is not on a session") }
        let endpoint: EndpointID
        switch destination {
        case .app:
            guard let transport = await session.appTransport else { throw .disconnected("no app joined") }
            endpoint = transport
        case .receiver:
            endpoint = .receiver0
        }
        try await session.send(namespace: namespace, destination: endpoint, payload: payload)
    }

    /// Sends a JSON object with a fresh `requestId` and waits for the reply with the same id on
    /// this namespace. The reply's value is its JSON; a reply with `type` ERROR is still a value
    /// (custom protocols define their own errors).
    public func request(_ object: JSONObject, timeout: Double? = nil) async -> CastRequest<JSONValue> {
        let type = object["type"]?.string ?? "message"
        guard let session = session.withLock({ $0.value }) else { return .failed(type: type, .disconnected("the channel is not on a session")) }
        return await session.channelRequest(namespace: namespace, type: type, object: object, timeout: timeout)
    }
}

/// A weak reference to a session.
struct WeakSession: @unchecked Sendable {
    weak var value: CastSession?
}

extension CastSession {
    func channelRequest(namespace: CastNamespace, type: String, object: JSONObject, timeout: Double?) -> CastRequest<JSONValue> {
        appRequest(namespace: namespace, type: type, timeout: timeout,
                   build: { id, _ in
                       var message = object
                       message.set("requestId", .int(Int64(id.rawValue)))
                       return .object(message)
                   },
                   map: { payload in .success(payload.json) })
    }
}
