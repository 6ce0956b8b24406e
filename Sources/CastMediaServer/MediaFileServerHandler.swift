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
/// - Any other path (wrong token, unknown name) → 404, whatever the method.
///
/// Every response carries `Access-Control-Allow-Origin: *`: the receiver is a web page of another
/// origin. File bodies go out as a `FileRegion` (sendfile), never through memory; the file is
/// opened on the thread pool for each request and closed when the response is written or fails.
/// Keeps the connection alive when the client asks. Runs on the channel's event loop.
final class MediaFileServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// What every connection of one server shares.
    struct Configuration: Sendable {
        /// The random first path segment.
        let token: String
        /// Published name (decoded) → file.
        let files: [String: ServedFile]
        let fileIO: NonBlockingFileIO
        let log: Logger
        /// Called on the event loop once per answered request.
        let record: @Sendable (ServedRequest) -> Void
    }

    private let configuration: Configuration
    private var request: HTTPRequestHead?
    private var peer = "unknown peer"

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = Self.describe(context.channel.remoteAddress)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let io = error as? IOError, [ECONNRESET, EPIPE].contains(io.errnoCode) {
            configuration.log.debug("media connection reset: \(error)", ["peer": .string(peer)])
        } else {
            configuration.log.warning("media connection error: \(error)", ["peer": .string(peer)])
        }
        context.close(promise: nil)
    }

    // MARK: Routing

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let file = file(for: head.uri) else {
            return sendEmpty(.notFound, body: "not found\n", head: head, context: context)
        }
        switch head.method {
        case .GET, .HEAD:
            serve(file, head: head, context: context)
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

    /// The file `/<token>/<percent-encoded name>[?query]` names; nil for anything else.
    private func file(for uri: String) -> ServedFile? {
        let target = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let prefix = "/\(configuration.token)/"
        guard target.hasPrefix(prefix),
              let name = MediaFileServer.percentDecoded(target.dropFirst(prefix.count)) else { return nil }
        return configuration.files[name] ?? ServedFile.inFolder(name, of: configuration.files)
    }

    // MARK: Files

    private func serve(_ file: ServedFile, head: HTTPRequestHead, context: ChannelHandlerContext) {
        let rangeFields = head.headers["Range"]
        let rangeText = rangeFields.isEmpty ? nil : rangeFields.joined(separator: ", ")
        // Several Range fields cannot be combined; an If-Range we cannot validate (we send no
        // validators) means the client wants the whole file if anything changed: ignore Range.
        let usableRange = rangeFields.count == 1 && !head.headers.contains(name: "If-Range") ? rangeFields[0] : nil
        configuration.fileIO.openFile(_deprecatedPath: file.path, eventLoop: context.eventLoop)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .failure(let error):
                    self.configuration.log.warning("cannot open \(file.path): \(error)", [
                        "path": .string(file.path), "peer": .string(self.peer),
                    ])
                    let missing = (error as? IOError)?.errnoCode == ENOENT
                    self.sendEmpty(missing ? .notFound : .internalServerError,
                                   body: missing ? "not found\n" : "cannot read file\n", head: head, context: context)
                case .success(let (handle, region)):
                    // Sent even when the client has gone meanwhile: the writes then fail, which
                    // closes the file and records the request as not completed.
                    let range = ByteRange.parse(usableRange, size: Int64(region.endIndex))
                    self.send(file, handle: handle, size: Int64(region.endIndex), range: range,
                              rangeText: rangeText, head: head, context: context)
                }
            }
    }

    private func send(_ file: ServedFile, handle: NIOFileHandle, size: Int64, range: ByteRange, rangeText: String?,
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
        if status != .rangeNotSatisfiable { headers.add(name: "Content-Type", value: file.contentType) }
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
            self.finish(head: head, range: rangeText, status: status, bytes: completed && sendsBody ? body.length : 0,
                        completed: completed)
            if !keepAlive || !completed { channel.close(promise: nil) }
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
            self.finish(head: head, range: head.headers["Range"].first, status: status,
                        bytes: completed ? Int64(bytes.count) : 0, completed: completed)
            if !keepAlive || !completed { channel.close(promise: nil) }
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

    /// Logs and records one answered request.
    private func finish(head: HTTPRequestHead, range: String?, status: HTTPResponseStatus, bytes: Int64, completed: Bool) {
        let served = ServedRequest(method: "\(head.method)", path: head.uri, range: range, status: Int(status.code),
                                   bytes: bytes, completed: completed, peer: peer)
        configuration.log.debug("\(served)", [
            "method": .string(served.method), "path": .string(served.path), "range": .string(range ?? ""),
            "status": .int(served.status), "bytes": .int(bytes), "completed": .bool(completed), "peer": .string(peer),
        ])
        configuration.record(served)
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
