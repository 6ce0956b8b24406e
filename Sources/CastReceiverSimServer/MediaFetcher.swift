import NIOCore
import NIOHTTP1
import NIOPosix

/// Fetches the start of a media URL the way a Cast device does after LOAD: one
/// `GET <url>` with `Range: bytes=0-<n-1>`, reading the response head and at most `n` body bytes.
///
/// Plain `http://` only (anything else is an `unsupported scheme` result). Host forms:
/// `name`, `1.2.3.4`, `[::1]`, each with an optional `:port` (default 80). Bounded: the
/// body is cut at `n` bytes (then the connection is closed), the head by NIO's decoder
/// limits, and the whole exchange by a timeout scheduled on the event loop.
public enum MediaFetcher {
    /// Fetches the first `rangeBytes` bytes of `url`. The future always succeeds: failures
    /// (bad URL, connect error, timeout, protocol error) are in ``MediaFetchResult/error``.
    /// `source`: the local address to fetch from (a simulated device's own, as a real device
    /// fetches from its address); nil or an unspecified address lets the kernel choose.
    public static func fetch(url: String, rangeBytes: Int = 65536, timeout: Double = 5,
                             group: EventLoopGroup, source: String? = nil) -> EventLoopFuture<MediaFetchResult> {
        let loop = group.next()
        let target: Target
        switch Target.parse(url) {
        case .success(let parsed): target = parsed
        case .failure(let failure): return loop.makeSucceededFuture(MediaFetchResult(url: url, error: failure.reason))
        }
        let limit = max(1, rangeBytes)
        let seconds = timeout.isFinite ? min(max(timeout, 0.001), 3600) : 3600
        let deadline = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        return loop.flatSubmit {
            let state = FetchState(promise: loop.makePromise(), url: url, limit: limit)
            let bound = NIOLoopBound(state, eventLoop: loop)
            state.timeout = loop.scheduleTask(in: deadline) {
                bound.value.finish(error: "timed out after \(seconds) s")
            }
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: target.hostHeader)
            headers.add(name: "Range", value: "bytes=0-\(limit - 1)")
            headers.add(name: "User-Agent", value: "castline-receiver-sim")
            headers.add(name: "Accept", value: "*/*")
            headers.add(name: "Connection", value: "close")
            let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
            var bootstrap = ClientBootstrap(group: loop)
            if let source, source != "0.0.0.0", source != "::", let local = try? SocketAddress(ipAddress: source, port: 0) {
                bootstrap = bootstrap.bind(to: local)
            }
            bootstrap
                .connectTimeout(deadline)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        try sync.addHTTPClientHandlers()
                        try sync.addHandler(FetchHandler(state: bound.value, request: request))
                    }
                }
                .connect(host: target.host, port: target.port)
                .whenComplete { result in
                    switch result {
                    case .success(let channel):
                        // Timed out while connecting: nobody reads this channel any more.
                        if bound.value.finished { channel.close(promise: nil) }
                    case .failure(let error):
                        bound.value.finish(error: "cannot connect to \(target.host):\(target.port): \(error)")
                    }
                }
            return state.promise.futureResult
        }
    }

    /// Host, port and request target of an `http://` URL.
    struct Target: Equatable {
        var host: String
        var port: Int
        /// Path and query (`/a/b.mp4?x=1`); `/` when the URL has none. The fragment is dropped.
        var path: String
        /// The `Host` header: the host as written (brackets kept) plus `:port` unless 80.
        var hostHeader: String

        struct Failure: Error, Equatable { let reason: String }

        static func parse(_ url: String) -> Result<Target, Failure> {
            guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://"), colon > url.startIndex else {
                return .failure(Failure(reason: "invalid URL"))
            }
            let scheme = url[..<colon].lowercased()
            guard scheme == "http" else { return .failure(Failure(reason: "unsupported scheme \(scheme)")) }
            var rest = url[url.index(colon, offsetBy: 3)...]
            if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            var authority = rest[..<authorityEnd]
            let pathPart = rest[authorityEnd...]
            let path = pathPart.isEmpty ? "/" : (pathPart.first == "?" ? "/" + pathPart : String(pathPart))
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            let host: Substring
            let portText: Substring?
            if authority.first == "[" {
                guard let close = authority.firstIndex(of: "]") else { return .failure(Failure(reason: "invalid URL")) }
                host = authority[authority.index(after: authority.startIndex)..<close]
                let after = authority[authority.index(after: close)...]
                guard after.isEmpty || after.first == ":" else { return .failure(Failure(reason: "invalid URL")) }
                portText = after.isEmpty ? nil : after.dropFirst()
            } else {
                let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                host = parts[0]
                portText = parts.count > 1 ? parts[1] : nil
            }
            guard !host.isEmpty, !host.contains(":") || authority.first == "[" else {
                return .failure(Failure(reason: "invalid URL"))
            }
            var port = 80
            if let portText, !portText.isEmpty {
                guard portText.allSatisfy(\.isASCII), let value = Int(portText), (1...65535).contains(value) else {
                    return .failure(Failure(reason: "invalid port in URL"))
                }
                port = value
            }
            let hostWritten = authority.first == "[" ? "[\(host)]" : String(host)
            // An IPv6 zone is written `%25eth0` in URLs (RFC 6874) and `%eth0` for getaddrinfo.
            let connectHost = host.replacingOccurrencesOfZoneEscape()
            return .success(Target(host: connectHost, port: port, path: path,
                                   hostHeader: port == 80 ? hostWritten : "\(hostWritten):\(port)"))
        }
    }

    /// The one fetch in progress: the result so far and how to end it. Lives on the fetch's loop.
    private final class FetchState {
        let promise: EventLoopPromise<MediaFetchResult>
        let limit: Int
        var result: MediaFetchResult
        var finished = false
        var channel: Channel?
        var timeout: Scheduled<Void>?

        init(promise: EventLoopPromise<MediaFetchResult>, url: String, limit: Int) {
            self.promise = promise
            self.limit = limit
            result = MediaFetchResult(url: url)
        }

        /// Completes the fetch once (later calls do nothing) and closes the connection.
        func finish(error: String?) {
            guard !finished else { return }
            finished = true
            if let error { result.error = error }
            timeout?.cancel()
            channel?.close(promise: nil)
            promise.succeed(result)
        }
    }

    /// Sends the request when the connection is up and fills the state from the response.
    private final class FetchHandler: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        private let state: FetchState
        private let request: HTTPRequestHead
        private var sawHead = false

        init(state: FetchState, request: HTTPRequestHead) {
            self.state = state
            self.request = request
        }

        func handlerAdded(context: ChannelHandlerContext) {
            state.channel = context.channel
            if state.finished { context.close(promise: nil) }
        }

        func channelActive(context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(.head(request)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !state.finished else { return }
            switch unwrapInboundIn(data) {
            case .head(let head):
                // Interim responses (100 Continue, 103 Early Hints) are followed by the real one.
                if (100..<200).contains(head.status.code) && head.status.code != 101 { return }
                sawHead = true
                state.result.status = Int(head.status.code)
                state.result.contentRange = head.headers.first(name: "Content-Range")
                state.result.contentType = head.headers.first(name: "Content-Type")
                state.result.allowOrigin = head.headers.first(name: "Access-Control-Allow-Origin")
            case .body(let buffer):
                let wanted = MediaFetchResult.prefixLength - state.result.prefix.count
                if wanted > 0 { state.result.prefix += buffer.readableBytesView.prefix(wanted) }
                state.result.bytes += min(buffer.readableBytes, state.limit - state.result.bytes)
                if state.result.bytes >= state.limit { state.finish(error: nil) }
            case .end:
                state.finish(error: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.finish(error: sawHead ? "connection closed after \(state.result.bytes) body bytes"
                                        : "connection closed before a response")
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            state.finish(error: "\(error)")
            context.close(promise: nil)
        }
    }
}

private extension Substring {
    /// `fe80::1%25eth0` → `fe80::1%eth0`.
    func replacingOccurrencesOfZoneEscape() -> String {
        guard let percent = firstIndex(of: "%") else { return String(self) }
        let zone = self[index(after: percent)...]
        return String(self[..<percent]) + "%" + (zone.hasPrefix("25") ? String(zone.dropFirst(2)) : String(zone))
    }
}
