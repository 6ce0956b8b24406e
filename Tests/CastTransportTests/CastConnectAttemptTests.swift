import CastLogging
import CastTestSupport
import CastTransport
import NIOPosix
import Testing

/// A connect its owner gives up (a session ending while it reconnects) ends at once, its socket
/// closed, instead of running on until its timeout, possibly onto loops shut down meanwhile.
@Suite("CastConnectAttempt", .timeLimit(.minutes(1)))
struct CastConnectAttemptTests {
    static func options() -> CastConnectionOptions {
        var options = CastConnectionOptions()
        options.logSystem = LogSystem()
        options.connectTimeout = 40   // a cancel that did not work ends in "no handshake within 40 s" instead
        return options
    }

    @Test("cancelled during a TLS handshake the device never answers: throws cancelled, the socket closes")
    func cancelDuringHandshake() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try await SilentListener.start(group: group)
        let attempt = CastConnectAttempt()
        let connect = Task { () throws(CastTransportError) -> CastConnection in
            try await CastConnection.connect(host: "127.0.0.1", port: listener.port, options: Self.options(), group: group,
                                             attempt: attempt)
        }
        #expect(await listener.wait { $0.accepted == 1 }, "the connect reached the listener")
        attempt.cancel()
        let result = await connect.result
        #expect(throws: CastTransportError.cancelled(endpoint: "127.0.0.1:\(listener.port)")) { try result.get() }
        #expect(await listener.wait { $0.closedByPeer == 1 }, "the connect's socket was closed")
        #expect(attempt.isCancelled)
        await listener.stop()
        try await group.shutdownGracefully()
    }

    @Test("cancelled before it starts: throws cancelled without opening a socket")
    func cancelBeforeStart() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try await SilentListener.start(group: group)
        let attempt = CastConnectAttempt()
        attempt.cancel()
        attempt.cancel()   // idempotent
        await #expect(throws: CastTransportError.cancelled(endpoint: "127.0.0.1:\(listener.port)")) {
            _ = try await CastConnection.connect(host: "127.0.0.1", port: listener.port, options: Self.options(), group: group,
                                                 attempt: attempt)
        }
        #expect(listener.accepted == 0)
        #expect(CastTransportError.cancelled(endpoint: "tv:8009").description == "connecting to tv:8009 was cancelled")
        await listener.stop()
        try await group.shutdownGracefully()
    }
}
