import CastCore
import CastDeviceAuth
import CastLogging
import CastProtocol
import NIOCore
import Synchronization

/// One CASTV2 connection to a device: TCP + TLS (the device's self-signed certificate is not
/// checked by TLS; trust comes from device authentication), the Cast codec with its traffic log,
/// the heartbeat (PONG to PINGs, PING when the device is silent, close on timeout), request
/// correlation (``CastRequestHandler``) and an optional device-auth challenge. Every other
/// inbound message arrives on ``messages`` in order, with back-pressure.
///
/// Thread-safe. The connection ends once: by ``close()``, by the device, by heartbeat timeout or
/// by an error; pending requests then fail with the reason, ``messages`` finishes and
/// ``closeReason`` says which. ``messages`` is iterated once: a consumer that stops iterating
/// closes the connection (nobody would read the replies), and so does releasing the connection
/// without ``close()``.
package final class CastConnection: Sendable {
    /// `host:port`, as in logs and errors.
    package let endpoint: String
    /// The DER of the certificate the device presented.
    package let peerCertificateDER: [UInt8]
    /// What device authentication found.
    package let deviceAuth: DeviceAuthResult
    /// Inbound messages except heartbeats (and the device-auth reply consumed by ``connect``).
    package let messages: CastInboundStream

    private let channel: Channel
    private let pipeline: ConnectionPipeline
    /// The close reason once known, so asking later never touches the event loop (which may be
    /// shut down by then).
    private let knownCloseReason = Mutex<CastConnectionCloseReason?>(nil)
    private let log: Logger

    init(endpoint: String, peerCertificateDER: [UInt8], deviceAuth: DeviceAuthResult, pipeline: ConnectionPipeline, log: Logger) {
        self.endpoint = endpoint
        self.peerCertificateDER = peerCertificateDER
        self.deviceAuth = deviceAuth
        self.messages = pipeline.messages
        self.channel = pipeline.channel
        self.pipeline = pipeline
        self.log = log
        pipeline.closed.whenSuccess { [weak self] reason in self?.knownCloseReason.withLock { $0 = reason } }
    }

    /// The most bytes one socket read takes: with the inbound bridge's high watermark, the bound
    /// on what a device's flood can make the connection hold.
    static let maximumReadBytes = 16_384

    /// Sends a request and returns it at once; its reply (matched by ``CastRequestHandler``)
    /// becomes its value through `map`: as it arrives, or with `afterDelivery` once the consumer
    /// of ``messages`` has applied it (``CastInbound/completeReply()``). Requests queued one after
    /// another from one thread or actor go out in that order. A request on an ended connection
    /// fails `disconnected`.
    package func request<Value: Sendable>(source: String, destination: String, namespace: CastNamespace, type: String,
                                         timeout: Double, supersedes: Bool = false, afterDelivery: Bool = false,
                                         build: @escaping @Sendable (RequestID) -> JSONValue,
                                         map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) -> CastRequest<Value> {
        let request = CastRequest<Value>(type: type, timeout: timeout, map: map)
        let spec = CastRequestSpec(sourceID: source, destinationID: destination, namespace: namespace, type: type,
                                   timeout: timeout, supersedes: supersedes, completesAfterDelivery: afterDelivery,
                                   request: request, build: build)
        channel.writeAndFlush(CastOutbound.request(spec)).whenFailure { error in
            // Refused before the request handler saw it (the channel had closed); otherwise the
            // handler has failed it already and this changes nothing.
            request.complete(with: .failure(.disconnected("\(error)")))
        }
        return request
    }

    /// Writes one message. Throws ``CastTransportError/closed(endpoint:reason:)`` once the
    /// connection has ended, ``CastTransportError/sendFailed(endpoint:reason:)`` otherwise.
    package func send(_ message: CastMessage) async throws(CastTransportError) {
        do {
            try await channel.writeAndFlush(CastOutbound.message(message)).get()
        } catch {
            if !channel.isActive { throw .closed(endpoint: endpoint, reason: await closeReason) }
            throw .sendFailed(endpoint: endpoint, reason: "\(error)")
        }
    }

    /// Fails every request still waiting for a reply with ``CastRequestError/disconnected(_:)``
    /// saying `why` (the session behind them ended); the connection stays open.
    package func failPendingRequests(_ why: String) {
        let requests = pipeline.requests
        requests.eventLoop.execute { requests.value.failAll(.disconnected(why)) }
    }

    /// Fails the requests still waiting for a reply from `destination` (an app's transport that
    /// went away) with ``CastRequestError/disconnected(_:)`` saying `why`; others stay.
    package func failPendingRequests(to destination: String, _ why: String) {
        let requests = pipeline.requests
        requests.eventLoop.execute { requests.value.failAll(to: destination, .disconnected(why)) }
    }

    /// Queues one message and returns at once: messages queued one after another from one
    /// thread or actor go out in that order. `completion` (optional) gets nil once written, or
    /// the error (``CastTransportError/closed(endpoint:reason:)`` with `.error` when the
    /// connection had ended, ``CastTransportError/sendFailed(endpoint:reason:)`` otherwise).
    ///
    /// `flush: false` leaves the message for the next flushed one (``send(_:)`` or `enqueue`),
    /// so both leave in one TLS write and one syscall. Only for a message that is always
    /// followed by another, such as a CONNECT before the first request on it.
    package func enqueue(_ message: CastMessage, flush: Bool = true, completion: (@Sendable (CastTransportError?) -> Void)? = nil) {
        let channel = self.channel
        guard let completion else {
            let outbound = CastOutbound.message(message)
            if flush { channel.writeAndFlush(outbound, promise: nil) } else { channel.write(outbound, promise: nil) }
            return
        }
        let endpoint = self.endpoint
        let outbound = CastOutbound.message(message)
        (flush ? channel.writeAndFlush(outbound) : channel.write(outbound)).whenComplete { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error):
                completion(channel.isActive ? .sendFailed(endpoint: endpoint, reason: "\(error)")
                                            : .closed(endpoint: endpoint, reason: .error("\(error)")))
            }
        }
    }

    /// Closes the connection (idempotent); ``closeReason`` becomes `.local` unless it had already ended.
    package func close() async {
        await pipeline.closeLocally()
        _ = await closeReason
    }

    /// Starts closing without waiting (for owners that cannot await, e.g. in `deinit`).
    package func closeSoon() {
        if channel.isActive { channel.close(promise: nil) }
    }

    deinit {
        // A connection dropped without close() must not keep its socket and heartbeat alive.
        // (Only while open: after the event loops have shut down there is nothing to close.)
        closeSoon()
    }

    /// Waits until the connection has ended and says how.
    package var closeReason: CastConnectionCloseReason {
        get async {
            if let known = knownCloseReason.withLock({ $0 }) { return known }
            return (try? await pipeline.closed.get()) ?? .error("unknown")
        }
    }

    /// The most inbound messages that waited for the consumer at once (tests of the bound).
    func mostBufferedInbound() async -> Int {
        let bridge = pipeline.bridge
        return (try? await bridge.eventLoop.submit { bridge.value.mostBuffered }.get()) ?? -1
    }

    /// Whether the connection is still open.
    package var isActive: Bool { channel.isActive }
}
