import CastCore
import CastLogging
import CastlineDaemon
import NIOCore
import NIOHTTP1

/// `GET /v1/events`: the hub's events as server-sent events (`text/event-stream`): each one
/// `id: <seq>`, `event: <kind>`, `data: <JSON>`; a comment every 15 s keeps idle proxies open.
/// Each write is awaited, so a slow client holds back only its own subscription (which drops its
/// oldest events and says so); a client that takes nothing for 60 s is closed.
enum EventStream {
    static let keepAliveInterval: Duration = .seconds(15)
    static let stalledWrite: TimeAmount = .seconds(60)

    static func start(on channel: Channel, version: HTTPVersion, subscription: HubEvents.Subscription, log: Logger) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Accel-Buffering", value: "no")
        channel.writeAndFlush(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: .ok, headers: headers)), promise: nil)
        log.debug("event stream opened", ["subscribers": .int(0)])
        let (ticks, tick) = AsyncStream<HubEvents.Event?>.makeStream(bufferingPolicy: .bufferingNewest(HubEvents.bufferSize))
        let forward = Task {
            for await event in subscription.events { tick.yield(event) }
            tick.finish()
        }
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: keepAliveInterval)
                tick.yield(nil)
            }
        }
        channel.closeFuture.whenComplete { _ in
            subscription.cancel()
            forward.cancel()
            keepAlive.cancel()
            tick.finish()
        }
        Task {
            defer {
                subscription.cancel()
                forward.cancel()
                keepAlive.cancel()
            }
            // The first line tells the client the stream is live (and flushes its headers).
            guard await send(": castline events\n\n", on: channel) else { return }
            for await event in ticks {
                let text = event.map { "id: \($0.sequence)\nevent: \($0.kind.rawValue)\ndata: \($0.json.serialized())\n\n" } ?? ": keep-alive\n\n"
                guard await send(text, on: channel) else { break }
            }
            log.debug("event stream closed")
        }
    }

    /// Writes `text` and waits until it has gone out (false: the connection is gone or stalled).
    static func send(_ text: String, on channel: Channel) async -> Bool {
        guard channel.isActive else { return false }
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: written)
        let timer = channel.eventLoop.scheduleTask(in: stalledWrite) { channel.close(promise: nil) }
        defer { timer.cancel() }
        do {
            try await written.futureResult.get()
            return true
        } catch {
            return false
        }
    }
}
