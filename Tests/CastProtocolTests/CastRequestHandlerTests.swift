import CastCore
import CastLogging
import CastProtocol
import NIOCore
import NIOEmbedded
import Testing

/// ``CastRequestHandler`` on an `EmbeddedChannel`: numbering, replies, supersession, failures
/// and every timeout on the embedded loop's clock (advanced by the test, never slept).
@Suite("CastRequestHandler")
struct CastRequestHandlerTests {
    static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: CastRequestHandler(logSystem: LogSystem()))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8009)).wait()
        return channel
    }

    /// Writes a GET_STATUS-like request on `namespace` and returns it (its value: the reply's JSON).
    static func send(_ channel: EmbeddedChannel, type: String = "GET_STATUS", namespace: CastNamespace = .media,
                     timeout: Double = 10, supersedes: Bool = false, afterDelivery: Bool = false) throws -> CastRequest<JSONValue> {
        let request = CastRequest<JSONValue>(type: type, timeout: timeout) { .success($0.json) }
        let spec = CastRequestSpec(sourceID: "sender-0", destinationID: "app-1", namespace: namespace, type: type, timeout: timeout,
                                   supersedes: supersedes, completesAfterDelivery: afterDelivery, request: request,
                                   build: { ["type": .string(type), "requestId": .int(Int64($0.rawValue))] })
        try channel.writeOutbound(CastOutbound.request(spec))
        return request
    }

    static func status(_ requestID: Int, namespace: CastNamespace = .media) -> CastMessage {
        CastMessage(source: "app-1", destination: "sender-0", namespace: namespace,
                    json: ["type": "MEDIA_STATUS", "requestId": .int(Int64(requestID)), "status": []])
    }

    static func advance(_ channel: EmbeddedChannel, _ milliseconds: Int64) {
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(milliseconds))
    }

    @Test("requests are numbered from 1 and sent with their id; a reply completes its request and is handed on decoded")
    func numberingAndReplies() throws {
        let channel = try Self.channel()
        let first = try Self.send(channel)
        let second = try Self.send(channel)
        #expect(first.id == 1 && second.id == 2)
        let sent = try #require(try channel.readOutbound(as: CastMessage.self))
        #expect(sent.payload.text.flatMap { try? JSONValue.parse($0) }?["requestId"]?.int == 1)
        try channel.writeInbound(Self.status(2))
        let inbound = try #require(try channel.readInbound(as: CastInbound.self))
        guard case .media(.mediaStatus)? = inbound.payload else { Issue.record("payload \(String(describing: inbound.payload))"); return }
        #expect(inbound.reply == nil, "completed by the handler, not left to the consumer")
        #expect(second.completedResult.map { (try? $0.get())?["requestId"]?.int } == 2)
        #expect(first.completedResult == nil)
        // An unsolicited status and a late duplicate pass on, answering nothing.
        try channel.writeInbound(Self.status(0))
        try channel.writeInbound(Self.status(2))
        #expect(try channel.readInbound(as: CastInbound.self)?.reply == nil)
        #expect(try channel.readInbound(as: CastInbound.self)?.reply == nil)
        #expect(first.completedResult == nil)
        _ = try channel.finish()
    }

    @Test("a request that completes after delivery travels with its reply until the consumer completes it")
    func completesAfterDelivery() throws {
        let channel = try Self.channel()
        let request = try Self.send(channel, afterDelivery: true)
        try channel.writeInbound(Self.status(Int(request.id.rawValue)))
        let inbound = try #require(try channel.readInbound(as: CastInbound.self))
        #expect(inbound.reply != nil)
        #expect(request.completedResult == nil, "not before the consumer has applied the reply")
        inbound.completeReply()
        #expect(request.completedResult != nil)
        _ = try channel.finish()
    }

    @Test("timeouts share one timer on the loop's clock: a shorter one re-arms it sooner, later ones still time out")
    func oneTimerForEveryTimeout() throws {
        let channel = try Self.channel()
        let first = try Self.send(channel, timeout: 2)
        Self.advance(channel, 300)
        let second = try Self.send(channel, timeout: 2)
        let shortest = try Self.send(channel, type: "LOAD", timeout: 0.1)
        Self.advance(channel, 99)
        #expect(shortest.completedResult == nil, "due at 0.1 s")
        Self.advance(channel, 1)
        #expect(shortest.completedResult == .failure(.timedOut(after: 0.1)))
        #expect(first.completedResult == nil && second.completedResult == nil)
        Self.advance(channel, 1_599)   // 1.999 s after the first
        #expect(first.completedResult == nil)
        Self.advance(channel, 1)
        #expect(first.completedResult == .failure(.timedOut(after: 2)))
        #expect(second.completedResult == nil, "its own deadline is 0.3 s later")
        Self.advance(channel, 300)
        #expect(second.completedResult == .failure(.timedOut(after: 2)))
        let forever = try Self.send(channel, timeout: .infinity)
        Self.advance(channel, 86_400_000)
        #expect(forever.completedResult == nil, "no timeout: never due")
        _ = try channel.finish()
    }

    @Test("a second supersedable request of the same type fails the first as superseded; others stay")
    func supersession() throws {
        let channel = try Self.channel()
        let load = try Self.send(channel, type: "LOAD", supersedes: true)
        let play = try Self.send(channel, type: "PLAY")
        let newer = try Self.send(channel, type: "LOAD", supersedes: true)
        #expect(load.completedResult == .failure(.superseded(by: newer.id)))
        #expect(play.completedResult == nil && newer.completedResult == nil)
        _ = try channel.finish()
    }

    @Test("the end of the connection fails what is pending with its reason; later requests fail at once")
    func connectionEnd() throws {
        let channel = try Self.channel()
        let pending = try Self.send(channel)
        channel.pipeline.fireUserInboundEventTriggered(CastConnectionEnded(reason: .heartbeatTimeout(silentFor: 10)))
        guard case .failure(.disconnected(let why))? = pending.completedResult else {
            Issue.record("\(String(describing: pending.completedResult))")
            return
        }
        #expect(why.contains("heartbeat timeout"), "\(why)")
        let late = CastRequest<JSONValue>(type: "GET_STATUS", timeout: 10) { .success($0.json) }
        let spec = CastRequestSpec(sourceID: "sender-0", destinationID: "app-1", namespace: .media, type: "GET_STATUS", timeout: 10,
                                   request: late, build: { _ in [:] })
        #expect(throws: ChannelError.ioOnClosedChannel) { try channel.writeOutbound(CastOutbound.request(spec)) }
        guard case .failure(.disconnected(let lateWhy))? = late.completedResult else {
            Issue.record("\(String(describing: late.completedResult))")
            return
        }
        #expect(lateWhy.contains("heartbeat timeout"), "\(lateWhy)")
        _ = try? channel.finish()
    }

    @Test("cancel, failAll and a failed write end requests; a device's refusal is a typed failure")
    func failures() throws {
        let channel = try Self.channel()
        let cancelled = try Self.send(channel)
        cancelled.cancel()
        channel.embeddedEventLoop.run()
        #expect(cancelled.completedResult == .failure(.cancelled))
        let handler = try channel.pipeline.syncOperations.handler(type: CastRequestHandler.self)
        #expect(handler.pendingCount == 0, "the cancelled request left the tracker")
        let refused = try Self.send(channel, type: "LOAD")
        try channel.writeInbound(CastMessage(source: "app-1", destination: "sender-0", namespace: .media,
                                             json: ["type": "LOAD_FAILED", "requestId": .int(Int64(refused.id.rawValue)),
                                                    "detailedErrorCode": 104]))
        #expect(refused.completedResult == .failure(.loadFailed(DetailedErrorCode(rawValue: 104))))
        let orphan = try Self.send(channel)
        handler.failAll(.disconnected("the session ended"))
        #expect(orphan.completedResult == .failure(.disconnected("the session ended")))
        _ = try channel.finish()
    }
}
