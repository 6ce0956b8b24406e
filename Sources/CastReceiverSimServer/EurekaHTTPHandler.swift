import CastCore
import CastLogging
import NIOCore
import NIOHTTP1

/// Serves a simulated device's HTTP surface on 8008 (plain) and 8443 (TLS):
/// `GET /setup/eureka_info[?params=…]` → JSON, `GET /setup/icon.png` → a PNG, anything else 404,
/// methods other than GET/HEAD 405. Keeps the connection alive when the client asks.
/// Runs on the channel's event loop; the document comes from a closure called per request.
final class EurekaHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let document: () -> EurekaInfo
    private let log: Logger
    private var request: HTTPRequestHead?

    init(document: @escaping () -> EurekaInfo, log: Logger) {
        self.document = document
        self.log = log
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

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let (path, query) = Self.split(head.uri)
        let status: HTTPResponseStatus
        var body: [UInt8]
        var contentType = "application/json"
        switch (head.method, path) {
        case (.GET, "/setup/eureka_info"), (.HEAD, "/setup/eureka_info"):
            status = .ok
            body = document().json(params: Self.parameter("params", in: query)).serializedBytes()
        case (.GET, "/setup/icon.png"), (.HEAD, "/setup/icon.png"):
            status = .ok
            body = Self.iconPNG
            contentType = "image/png"
        case (.GET, _), (.HEAD, _):
            status = .notFound
            body = Array(#"{"error":"not found"}"#.utf8)
        default:
            status = .methodNotAllowed
            body = Array(#"{"error":"method not allowed"}"#.utf8)
        }
        log.debug("\(head.method) \(head.uri) → \(status.code)", [
            "method": .string("\(head.method)"), "path": .string(path), "status": .int(Int(status.code)),
            "peer": .string(SocketAddress.logDescription(context.channel.remoteAddress)),
        ])
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.count)")
        let keepAlive = head.isKeepAlive
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
                      promise: nil)
        if head.method == .HEAD { body = [] }
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        log.debug("HTTP connection error: \(error)", [
            "peer": .string(SocketAddress.logDescription(context.channel.remoteAddress)),
        ])
        context.close(promise: nil)
    }

    static func split(_ uri: String) -> (path: String, query: String?) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, nil) }
        return (String(uri[..<mark]), String(uri[uri.index(after: mark)...]))
    }

    static func parameter(_ name: String, in query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.first.map(String.init) == name {
                return parts.count > 1 ? String(parts[1]).removingPercentEncodingLeniently() : ""
            }
        }
        return nil
    }

    /// A 1×1 transparent PNG (`ic=/setup/icon.png` in the mDNS TXT record points here).
    static let iconPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]
}

extension String {
    /// `%2C` → `,`; malformed escapes are kept as they are.
    func removingPercentEncodingLeniently() -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(self.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
