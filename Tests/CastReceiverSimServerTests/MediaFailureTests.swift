import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import Glibc
import NIOCore
import NIOPosix
import Testing

/// A LOAD of loopback media that a receiver could not play fails as on a receiver: LOAD_FAILED
/// with the detailed error code to the sender, MEDIA_STATUS IDLE / ERROR; playable media plays.
/// Real sockets: the simulator fetches from a canned HTTP responder, a silent listener or a
/// closed port.
@Suite("Media failures over loopback", .timeLimit(.minutes(1)))
struct MediaFailureTests {
    /// Answers every connection with `response` (after the request arrives), then closes.
    final class CannedHTTPServer: Sendable {
        let channel: any Channel
        var port: Int { channel.localAddress?.port ?? 0 }

        static func start(_ response: [UInt8], group: EventLoopGroup) async throws -> CannedHTTPServer {
            let channel = try await ServerBootstrap(group: group)
                .childChannelInitializer { child in
                    child.eventLoop.makeCompletedFuture { try child.pipeline.syncOperations.addHandler(Responder(response)) }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return CannedHTTPServer(channel: channel)
        }

        private init(channel: any Channel) { self.channel = channel }

        func stop() async { try? await channel.close().get() }

        private final class Responder: ChannelInboundHandler, Sendable {
            typealias InboundIn = ByteBuffer
            typealias OutboundOut = ByteBuffer
            let response: [UInt8]
            init(_ response: [UInt8]) { self.response = response }
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: response))).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        }
    }

    static func response(_ status: String, _ contentType: String, _ body: [UInt8]) -> [UInt8] {
        Array("HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body
    }

    static let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [UInt8](repeating: 0, count: 64)

    /// One case: what the media server answers, the LOAD's path and content type, the code expected.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var response: [UInt8]
        var path = "/clip.mp4"
        var contentType = "video/mp4"
        var expected: Int
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "HTTP 404", response: response("404 Not Found", "text/html", Array("<h1>no</h1>".utf8)), expected: 104),
        Case(name: "HTTP 500", response: response("500 Internal Server Error", "text/plain", []), expected: 104),
        Case(name: "HTTP 403", response: response("403 Forbidden", "text/plain", []), expected: 104),
        Case(name: "not media", response: response("200 OK", "video/mp4", Array("<html><body>login</body></html>".utf8)), expected: 104),
        Case(name: "empty body", response: response("200 OK", "video/mp4", []), expected: 104),
        Case(name: "HLS 404", response: response("404 Not Found", "text/plain", []), path: "/live/index.m3u8",
             contentType: "application/x-mpegURL", expected: 311),
        Case(name: "HLS not a playlist", response: response("200 OK", "application/x-mpegURL", Array("<html/>".utf8)),
             path: "/live/index.m3u8", contentType: "application/x-mpegURL", expected: 411),
        Case(name: "DASH 503", response: response("503 Service Unavailable", "text/plain", []), path: "/dash/manifest.mpd",
             contentType: "application/dash+xml", expected: 321),
    ]

    /// CONNECT, LAUNCH the DMR, CONNECT to it, LOAD `url` with requestId 7; the app's transportId.
    static func load(_ client: TestCastClient, url: String, contentType: String) async throws -> String {
        try await client.send(namespace: .connection, ["type": "CONNECT"])
        try await client.send(namespace: .receiver, ["type": "LAUNCH", "appId": "CC1AD845", "requestId": 1])
        let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
        let transport = try #require(status?["status"]?["applications"]?[0]?["transportId"]?.string)
        try await client.send(namespace: .connection, destination: transport, ["type": "CONNECT"])
        try await client.send(namespace: .media, destination: transport, [
            "type": "LOAD", "requestId": 7, "autoplay": true,
            "media": ["contentId": .string(url), "contentType": .string(contentType), "streamType": "BUFFERED"],
        ])
        return transport
    }

    /// The LOAD_FAILED for requestId 7 arrives with `code`, and a MEDIA_STATUS IDLE / ERROR
    /// (other statuses, such as the INTERRUPTED end of an earlier session, are skipped).
    static func expectFailure(_ client: TestCastClient, code: Int, _ label: String) async {
        let failed = await client.next(type: "LOAD_FAILED", namespace: .media)
        #expect(failed?["requestId"]?.int == 7, "\(label): \(failed.map { $0.serialized() } ?? "no LOAD_FAILED")")
        #expect(failed?["detailedErrorCode"]?.int == Int64(code), "\(label)")
        let idle = await client.next(timeout: 5) { message in
            guard message.namespace == .media, let text = message.payload.text, let json = try? JSONValue.parse(text) else { return false }
            return json["status"]?[0]?["idleReason"]?.string == "ERROR"
        }
        let status = idle.flatMap { $0.payload.text }.flatMap { try? JSONValue.parse($0) }
        #expect(status?["status"]?[0]?["playerState"]?.string == "IDLE", "\(label)")
        #expect(status?["status"]?[0]?["idleReason"]?.string == "ERROR", "\(label)")
    }

    @Test("an HTTP error or bytes that are not media: LOAD_FAILED with the receiver's code, then IDLE / ERROR", arguments: cases)
    func httpFailures(_ item: Case) async throws {
        try await withSimulatorRig { rig in
            let server = try await CannedHTTPServer.start(item.response, group: rig.group)
            try await withTeardown(server, { await $0.stop() }) { server in
                let client = try await rig.connect()
                _ = try await Self.load(client, url: "http://127.0.0.1:\(server.port)\(item.path)", contentType: item.contentType)
                await Self.expectFailure(client, code: item.expected, item.name)
                await client.close()
            }
        }
    }

    @Test("connection refused: LOAD_FAILED 104, IDLE / ERROR")
    func refused() async throws {
        try await withSimulatorRig { rig in
            // A port that was just bound and closed: nothing listens there.
            let probe = try await ServerBootstrap(group: rig.group).bind(host: "127.0.0.1", port: 0).get()
            let port = probe.localAddress?.port ?? 1
            try await probe.close().get()
            let client = try await rig.connect()
            _ = try await Self.load(client, url: "http://127.0.0.1:\(port)/clip.mp4", contentType: "video/mp4")
            await Self.expectFailure(client, code: 104, "refused")
            await client.close()
        }
    }

    @Test("a server that never answers: LOAD_FAILED 104 after the fetch timeout, not before")
    func timeout() async throws {
        try await withSimulatorRig(settings: { $0.mediaFetchTimeout = 0.5 }) { rig in
            let silent = try await SilentListener.start(group: rig.group)
            try await withTeardown(silent, { await $0.stop() }) { silent in
                let client = try await rig.connect()
                let start = ContinuousClock.now
                _ = try await Self.load(client, url: "http://127.0.0.1:\(silent.port)/clip.mp4", contentType: "video/mp4")
                await Self.expectFailure(client, code: 104, "timeout")
                #expect(ContinuousClock.now - start >= .milliseconds(500), "failed before the fetch timeout")
                #expect(silent.accepted >= 1, "the device did connect")
                await client.close()
            }
        }
    }

    @Test("playable loopback media: the LOAD is answered with its requestId once fetched, then PLAYING")
    func playable() async throws {
        try await withSimulatorRig { rig in
            let server = try await CannedHTTPServer.start(Self.response("206 Partial Content", "video/mp4", Self.mp4), group: rig.group)
            try await withTeardown(server, { await $0.stop() }) { server in
                let client = try await rig.connect()
                _ = try await Self.load(client, url: "http://127.0.0.1:\(server.port)/clip.mp4", contentType: "video/mp4")
                let reply = await client.next(timeout: 5) { message in
                    guard message.namespace == .media, let text = message.payload.text, let json = try? JSONValue.parse(text) else { return false }
                    return json["requestId"]?.int == 7
                }
                let json = reply.flatMap { $0.payload.text }.flatMap { try? JSONValue.parse($0) }
                #expect(json?["type"]?.string == "MEDIA_STATUS")
                let playing = await client.next(timeout: 5) { message in
                    message.payload.text?.contains("\"PLAYING\"") ?? false
                }
                #expect(playing != nil)
                await client.close()
            }
        }
    }

    @Test("media elsewhere plays unchecked; the frame log says it was not checked, and a failed check is logged too")
    func frameLog() async throws {
        let folder = ScratchFolder("media-frames")
        defer { folder.remove() }
        let path = folder.path + "/frames.jsonl"
        try await withSimulatorRig(settings: { $0.frameLogPath = path }) { rig in
            let client = try await rig.connect()
            _ = try await Self.load(client, url: "http://media.example/a.mp4", contentType: "video/mp4")
            #expect(await client.next(timeout: 5) { $0.payload.text?.contains("\"PLAYING\"") ?? false } != nil)
            await client.close()
            let refusing = try await rig.connect()
            _ = try await Self.load(refusing, url: "http://127.0.0.1:1/a.mp4", contentType: "video/mp4")
            await Self.expectFailure(refusing, code: 104, "refused")
            await refusing.close()
        }
        let lines = String(decoding: try readAll(path), as: UTF8.self).split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }
        let unchecked = lines.first { $0["event"]?.string == "mediaNotChecked" }
        #expect(unchecked?["url"]?.string == "http://media.example/a.mp4", "\(lines.map { $0.serialized() })")
        let checked = lines.first { $0["event"]?.string == "mediaChecked" }
        #expect(checked?["detailedErrorCode"]?.int == 104)
        #expect(checked?["result"]?.string == "refused")
    }

    func readAll(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[..<n]
        }
        return bytes
    }
}
