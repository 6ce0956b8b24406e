import CastCore
import CastLogging
import CastlineDaemon
import NIOCore
import NIOHTTP1

/// One API connection: reads each request (a body of at most ``APIServer/maxBodySize``), checks
/// the bearer token where one is required, routes it (``APIRoute``) and answers with JSON, the
/// metrics text, or the event stream. Nothing reaches a device before the request has parsed.
/// A connection must bring each whole request within the read timeout of being ready for it (a
/// silent one, or one that trickles a header line now and then, is closed). One request at a
/// time: while its answer is computed and until it has been handed to the socket, the
/// connection is not read (a client that pipelines requests without reading the answers holds
/// one answer, not all of them). Loop-confined; the commands run on the control plane.
final class APIHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    struct Context: Sendable {
        let plane: ControlPlane
        let events: HubEvents
        let metrics: @Sendable () async -> String
        /// The token TCP requests must carry (`Authorization: Bearer …`); nil on the Unix socket.
        let token: APIToken?
        let log: Logger
        /// How long a connection may take to bring its next whole request.
        let requestTimeout: TimeAmount
        /// Connections closed for bringing no whole request in time (shared by the listener's connections).
        let timedOut: @Sendable () -> Void
        /// Requests refused for want of a valid token.
        let unauthorized: @Sendable () -> Void
    }

    private let context: Context
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var refused = false
    private var streaming = false
    /// Requests being answered (computed, or their answers not yet handed to the socket).
    private var inFlight = 0
    private var busy: Bool { inFlight > 0 }
    private var readPending = false
    /// Closes the connection when the next whole request has not arrived in time.
    private var deadline: Scheduled<Void>?

    init(context: Context) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        armDeadline(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    /// Holds the connection's reads while a request is answered (a stream reads on: its client's
    /// end of file ends it).
    func read(context: ChannelHandlerContext) {
        if busy && !streaming {
            readPending = true
        } else {
            context.read()
        }
    }

    /// Starts the wait for the next whole request.
    private func armDeadline(_ channel: Channel) {
        deadline?.cancel()
        let timedOut = self.context.timedOut
        let bound = NIOLoopBound(self, eventLoop: channel.eventLoop)
        deadline = channel.eventLoop.scheduleTask(in: self.context.requestTimeout) {
            let handler = bound.value
            guard !handler.busy, !handler.streaming else { return }
            timedOut()
            handler.context.log.debug("API connection brought no whole request in time; closed")
            channel.close(promise: nil)
        }
    }

    /// The answer was handed to the socket (or failed): the next request may be read.
    func answered(_ channel: Channel) {
        inFlight -= 1
        guard channel.isActive, inFlight == 0 else { return }
        armDeadline(channel)
        if readPending {
            readPending = false
            channel.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            refused = false
            // The token first: an anonymous client learns nothing (not even the body limit),
            // and its body is never read.
            if let token = self.context.token, !token.accepts(head.headers.first(name: "authorization")) {
                refuseUnauthorized(head, context: context)
                return
            }
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > APIServer.maxBodySize {
                refuseTooLarge(context)
                return
            }
            if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var buffer):
            guard !refused else { return }
            if body.count + buffer.readableBytes > APIServer.maxBodySize {
                refuseTooLarge(context)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard !refused, let head else { return }
            self.head = nil
            deadline?.cancel()
            deadline = nil
            handle(head, context: context)
        }
    }

    /// 401 at the request's head, and the connection closes: its body is never read.
    private func refuseUnauthorized(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        refused = true
        self.context.unauthorized()
        let error = ControlError(.unauthorized, "unauthorized", "this listener needs Authorization: Bearer <token> (api.token_file)")
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"castline\"")
        self.context.log.info("\(head.method.rawValue) \(Self.pathOnly(head.uri)): 401 (no valid token)", ["status": .int(401)])
        respond(error.json, status: .unauthorized, headers: headers, keepAlive: false, context: context)
    }

    private func refuseTooLarge(_ context: ChannelHandlerContext) {
        refused = true
        let error = ControlError(.tooLarge, "body_too_large", "the request body is over \(APIServer.maxBodySize) bytes")
        respond(error.json, status: .payloadTooLarge, keepAlive: false, context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            // A stream is silent on the client's side by design; anything else idle goes.
            if !streaming && !busy { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Requests

    private func handle(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let started = NIODeadline.now()
        let keepAlive = head.isKeepAlive
        switch APIRoute.resolve(method: head.method, target: head.uri, body: body) {
        case .failure(let failure):
            var headers = HTTPHeaders()
            if !failure.allow.isEmpty { headers.add(name: "Allow", value: failure.allow.map(\.rawValue).joined(separator: ", ")) }
            log(head, status: failure.error.httpStatus, started: started)
            respond(failure.error.json, status: HTTPResponseStatus(statusCode: failure.error.httpStatus), headers: headers,
                    keepAlive: keepAlive, context: context)
        case .success(.events(let kinds)):
            streaming = true
            EventStream.start(on: context.channel, version: head.version, subscription: self.context.events.subscribe(kinds),
                              log: self.context.log)
        case .success(.metrics):
            inFlight += 1
            Self.answer(head, started: started, on: NIOLoopBound(self, eventLoop: context.eventLoop), channel: context.channel) { [metrics = self.context.metrics] in
                .text(await metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8")
            }
        case .success(.command(let command)):
            inFlight += 1
            Self.answer(head, started: started, on: NIOLoopBound(self, eventLoop: context.eventLoop), channel: context.channel) { [plane = self.context.plane] in
                let (status, json) = await Self.run(command, on: plane)
                return .json(json, status: status)
            }
        }
    }

    /// Runs a routed command on the control plane: the status and JSON every caller answers
    /// with (HTTP here, a bridge through ``InProcessRequest``).
    static func run(_ command: ControlCommand, on plane: ControlPlane) async -> (HTTPResponseStatus, JSONValue) {
        switch await plane.execute(command) {
        case .success(let json):
            let created = if case .putJob = command, json["created"] == true { true } else { false }
            return (created ? .created : .ok, json)
        case .failure(let error):
            return (HTTPResponseStatus(statusCode: error.httpStatus), error.json)
        }
    }

    /// What an answer carries.
    enum Answer: Sendable {
        case json(JSONValue, status: HTTPResponseStatus)
        case text(String, contentType: String)
    }

    /// Computes the answer off the loop, then writes it on the loop.
    static func answer(_ head: HTTPRequestHead, started: NIODeadline, on bound: NIOLoopBound<APIHandler>, channel: Channel,
                       _ compute: @escaping @Sendable () async -> Answer) {
        let keepAlive = head.isKeepAlive
        Task {
            let answer = await compute()
            channel.eventLoop.execute {
                let written: EventLoopFuture<Void>
                switch answer {
                case .json(let json, let status):
                    bound.value.log(head, status: Int(status.code), started: started)
                    written = write(json.serialized() + "\n", contentType: "application/json", status: status, headers: HTTPHeaders(),
                                    keepAlive: keepAlive, version: head.version, channel: channel)
                case .text(let text, let contentType):
                    bound.value.log(head, status: 200, started: started)
                    written = write(text, contentType: contentType, status: .ok, headers: HTTPHeaders(), keepAlive: keepAlive,
                                    version: head.version, channel: channel)
                }
                written.whenComplete { _ in bound.value.answered(channel) }
            }
        }
    }

    private func log(_ head: HTTPRequestHead, status: Int, started: NIODeadline) {
        let micros = (NIODeadline.now() - started).nanoseconds / 1000
        context.log.debug("\(head.method.rawValue) \(Self.pathOnly(head.uri)): \(status) in \(micros) µs", [
            "method": .string(head.method.rawValue), "path": .string(Self.pathOnly(head.uri)), "status": .int(status),
            "durationUs": .int(Int(micros)),
        ])
    }

    /// The path without the query (which may carry values not meant for logs).
    static func pathOnly(_ uri: String) -> String { String(uri.prefix { $0 != "?" }) }

    private func respond(_ json: JSONValue, status: HTTPResponseStatus, headers: HTTPHeaders = HTTPHeaders(), keepAlive: Bool,
                         context: ChannelHandlerContext) {
        inFlight += 1
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        Self.write(json.serialized() + "\n", contentType: "application/json", status: status, headers: headers, keepAlive: keepAlive,
                   version: .http1_1, channel: channel)
            .whenComplete { _ in bound.value.answered(channel) }
    }

    /// Writes one whole answer; the future completes once its end has been handed to the socket.
    @discardableResult
    static func write(_ text: String, contentType: String, status: HTTPResponseStatus, headers extra: HTTPHeaders, keepAlive: Bool,
                      version: HTTPVersion, channel: Channel) -> EventLoopFuture<Void> {
        var headers = extra
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(text.utf8.count))
        headers.add(name: "Cache-Control", value: "no-store")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        channel.write(HTTPServerResponsePart.head(HTTPResponseHead(version: version, status: status, headers: headers)), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        let done = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        if !keepAlive { done.whenComplete { _ in channel.close(promise: nil) } }
        return done
    }
}
