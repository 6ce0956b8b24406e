#if canImport(Glibc)
import Glibc
#endif
import CastLogging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Answers one connection of a ``MediaFileServer`` (after `configureHTTPServerPipeline`):
///
/// - `GET`/`HEAD /<token>/<name>` → 200 with the file, or 206/416 for a `Range` (see ``ByteRange``);
///   `Accept-Ranges: bytes`, `Content-Length`, the file's `Content-Type`.
/// - `OPTIONS` on a file → 204, the CORS preflight answer.
/// - Other methods on a file → 405 with `Allow`.
/// - Any other path (unknown or revoked token, unknown name), and any request from an address the
///   file was not published for → 404, whatever the method.
///
/// One response at a time: while a response is being written the connection is not read from
/// (a client that pipelines requests without reading the answers holds one open file, not one
/// per request), and requests already decoded wait in order. A connection must bring each
/// whole request within the idle bound of being ready for it (a silent connection, or one that
/// trickles a header line now and then, is closed); a response in flight has no such bound (a
/// paused device stops reading its download). File bodies go out as a `FileRegion` (sendfile) from a duplicate of the
/// publication's descriptor, closed when the response is written or fails. Runs on the channel's
/// event loop.
final class MediaFileServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What every connection of one server shares.
    struct Configuration: Sendable {
        let shared: MediaFileServer.Shared
        let threadPool: NIOThreadPool
        let log: Logger
        /// How long a connection may take to bring its next whole request.
        let requestTimeout: TimeAmount
    }

    private let configuration: Configuration
    private var request: HTTPRequestHead?
    /// Requests decoded while a response was in flight, answered in order.
    private var waiting: [HTTPRequestHead] = []
    private var responding = false
    private var readPending = false
    private var peer = "unknown peer"
    private var peerAddress = "?"
    /// Closes the connection when the next request has not arrived in time.
    private var deadline: Scheduled<Void>?

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = Self.describe(context.channel.remoteAddress)
        peerAddress = MediaFileServer.normalised(context.channel.remoteAddress?.ipAddress ?? "?")
        armDeadline(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    /// Starts the wait for the next whole request.
    private func armDeadline(context: ChannelHandlerContext) {
        deadline?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: configuration.requestTimeout) {
            let (handler, context) = bound.value
            guard !handler.responding else { return }
            handler.configuration.shared.countIdle()
            handler.configuration.log.debug("media connection brought no whole request in time; closed", ["peer": .string(handler.peer)])
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            deadline?.cancel()
            deadline = nil
            if responding {
                waiting.append(head)
            } else {
                respond(to: head, context: context)
            }
        }
    }

    /// Holds the connection's reads while a response is in flight.
    func read(context: ChannelHandlerContext) {
        if responding {
            readPending = true
        } else {
            context.read()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let io = error as? IOError, [ECONNRESET, EPIPE].contains(io.errnoCode) {
            configuration.log.debug("media connection reset: \(error)", ["peer": .string(peer)])
        } else {
            configuration.log.debug("media connection error: \(error)", ["peer": .string(peer)])
        }
        context.close(promise: nil)
    }

    /// A response is written (or failed): the next waiting request, else reading resumes.
    private func finished(context: ChannelHandlerContext) {
        responding = false
        if !waiting.isEmpty {
            respond(to: waiting.removeFirst(), context: context)
            return
        }
        armDeadline(context: context)
        if readPending {
            readPending = false
            context.read()
        }
    }

    // MARK: Routing

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        responding = true
        guard let (entry, leaf) = entry(for: head.uri) else {
            return sendEmpty(.notFound, body: "not found\n", head: head, context: context)
        }
        switch head.method {
        case .GET, .HEAD:
            serve(entry, leaf: leaf, head: head, context: context)
        case .OPTIONS:
            var headers = HTTPHeaders()
            headers.add(name: "Access-Control-Allow-Methods", value: "GET, HEAD, OPTIONS")
            headers.add(name: "Access-Control-Allow-Headers", value: "Range, Content-Type")
            headers.add(name: "Access-Control-Max-Age", value: "86400")
            sendEmpty(.noContent, headers: headers, head: head, context: context)
        default:
            var headers = HTTPHeaders()
            headers.add(name: "Allow", value: "GET, HEAD, OPTIONS")
            sendEmpty(.methodNotAllowed, headers: headers, body: "method not allowed\n", head: head, context: context)
        }
    }

    /// The publication `/<token>/<percent-encoded name>[?query]` names, with the leaf inside a
    /// published folder; nil for anything else, and for a peer the file was not published for.
    private func entry(for uri: String) -> (MediaFileServer.Shared.Entry, leaf: Substring?)? {
        let target = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard target.hasPrefix("/") else { return nil }
        let path = target.dropFirst()
        let token = path.prefix { $0 != "/" }
        guard token.count == 32, let name = MediaFileServer.percentDecoded(path.dropFirst(token.count + 1)) else { return nil }
        let entry: MediaFileServer.Shared.Entry
        switch configuration.shared.lookup(String(token), peer: peerAddress) {
        case .entry(let found): entry = found
        case .unknown: return nil
        case .wrongPeer:
            configuration.log.debug("media request from \(peer), not the device the file was published for: 404", ["peer": .string(peer)])
            return nil
        }
        if entry.file.isFolder {
            let folder = entry.name.hasSuffix("/") ? entry.name : entry.name + "/"
            guard name.hasPrefix(folder) else { return nil }
            let leaf = name.dropFirst(folder.count)
            guard ServedFile.isPlainLeaf(leaf) else { return nil }
            return (entry, leaf)
        }
        return name == entry.name ? (entry, nil) : nil
    }

    // MARK: Files

    private func serve(_ entry: MediaFileServer.Shared.Entry, leaf: Substring?, head: HTTPRequestHead, context: ChannelHandlerContext) {
        let rangeFields = head.headers["Range"]
        let rangeText = rangeFields.isEmpty ? nil : rangeFields.joined(separator: ", ")
        // Several Range fields cannot be combined; an If-Range we cannot validate (we send no
        // validators) means the client wants the whole file if anything changed: ignore Range.
        let usableRange = rangeFields.count == 1 && !head.headers.contains(name: "If-Range") ? rangeFields[0] : nil
        let contentType = leaf.map { ServedFile.folderFileType($0, folderType: entry.contentType) } ?? entry.contentType
        let file = entry.file
        let leafName = leaf.map(String.init)
        configuration.threadPool.runIfActive(eventLoop: context.eventLoop) { () throws -> Int32 in
            try file.descriptorForRequest(leaf: leafName).get()
        }
        .assumeIsolated()
        .whenComplete { result in
            switch result {
            case .failure(let error):
                self.configuration.log.debug("cannot open \(file.path)\(leafName.map { "/" + $0 } ?? ""): \(error)", ["peer": .string(self.peer)])
                self.sendEmpty(.notFound, body: "not found\n", head: head, context: context)
            case .success(let fd):
                var info = stat()
                guard fstat(fd, &info) == 0 else {
                    Glibc.close(fd)
                    return self.sendEmpty(.internalServerError, body: "cannot read file\n", head: head, context: context)
                }
                let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd)
                let size = Int64(info.st_size)
                self.send(contentType: contentType, handle: handle, size: size, range: ByteRange.parse(usableRange, size: size),
                          rangeText: rangeText, head: head, context: context)
            }
        }
    }

    private func send(contentType: String, handle: NIOFileHandle, size: Int64, range: ByteRange, rangeText: String?,
                      head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Accept-Ranges", value: "bytes")
        if let contentRange = range.contentRange(size: size) { headers.add(name: "Content-Range", value: contentRange) }
        let status: HTTPResponseStatus
        let body: (offset: Int64, length: Int64)
        switch range {
        case .partial(let bytes):
            status = .partialContent
            body = (bytes.lowerBound, range.bodyLength(size: size))
        case .unsatisfiable:
            status = .rangeNotSatisfiable
            body = (0, 0)
        case .full, .malformed:
            status = .ok
            body = (0, size)
        }
        if status != .rangeNotSatisfiable { headers.add(name: "Content-Type", value: contentType) }
        headers.add(name: "Content-Length", value: "\(body.length)")
        let sendsBody = head.method != .HEAD && body.length > 0
        writeHead(status, headers: headers, head: head, context: context)
        var writes: [EventLoopFuture<Void>] = []
        if sendsBody {
            let region = FileRegion(fileHandle: handle, readerIndex: Int(body.offset), endIndex: Int(body.offset + body.length))
            writes.append(context.write(wrapOutboundOut(.body(.fileRegion(region)))))
        }
        let end = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        writes.append(end)
        let channel = context.channel
        let keepAlive = head.isKeepAlive
        let loop = context.eventLoop
        // Close the file only once every write that reads it has completed (or failed).
        EventLoopFuture.andAllComplete(writes, on: loop).assumeIsolated().whenComplete { _ in
            try? handle.close()
        }
        end.assumeIsolated().whenComplete { result in
            let completed = (try? result.get()) != nil
            self.record(head: head, range: rangeText, status: status, bytes: completed && sendsBody ? body.length : 0,
                        completed: completed)
            if !keepAlive || !completed {
                channel.close(promise: nil)
            } else {
                self.finished(context: context)
            }
        }
    }

    // MARK: Responses

    /// A response without a file: status, optional small text body, CORS.
    private func sendEmpty(_ status: HTTPResponseStatus, headers extra: HTTPHeaders = HTTPHeaders(), body: String = "",
                           head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = extra
        let bytes = head.method == .HEAD ? [] : Array(body.utf8)
        if !body.isEmpty { headers.add(name: "Content-Type", value: "text/plain; charset=utf-8") }
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        writeHead(status, headers: headers, head: head, context: context)
        if !bytes.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        }
        let end = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        let channel = context.channel
        let keepAlive = head.isKeepAlive
        end.assumeIsolated().whenComplete { result in
            let completed = (try? result.get()) != nil
            self.record(head: head, range: head.headers["Range"].first, status: status,
                        bytes: completed ? Int64(bytes.count) : 0, completed: completed)
            if !keepAlive || !completed {
                channel.close(promise: nil)
            } else {
                self.finished(context: context)
            }
        }
    }

    private func writeHead(_ status: HTTPResponseStatus, headers extra: HTTPHeaders, head: HTTPRequestHead,
                           context: ChannelHandlerContext) {
        var headers = extra
        headers.add(name: "Access-Control-Allow-Origin", value: "*")
        if status != .noContent {
            headers.add(name: "Access-Control-Expose-Headers", value: "Content-Length, Content-Range, Accept-Ranges")
        }
        headers.add(name: "Connection", value: head.isKeepAlive ? "keep-alive" : "close")
        let response = HTTPResponseHead(version: head.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
    }

    /// Logs (at debug: the path holds the token) and records one answered request.
    private func record(head: HTTPRequestHead, range: String?, status: HTTPResponseStatus, bytes: Int64, completed: Bool) {
        let served = ServedRequest(method: "\(head.method)", path: head.uri, range: range, status: Int(status.code),
                                   bytes: bytes, completed: completed, peer: peer)
        configuration.log.debug("\(served)", [
            "method": .string(served.method), "path": .string(served.path), "range": .string(range ?? ""),
            "status": .int(served.status), "bytes": .int(bytes), "completed": .bool(completed), "peer": .string(peer),
        ])
        configuration.shared.record(served)
    }

    /// `192.168.1.20:51234`, `[fe80::1]:51234`.
    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown peer" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return address.pathname ?? "unix socket"
        }
    }
}
