import CastLogging
import CastlineLocalMedia
import CastReceiverSimServer
import CastTestSupport
import Glibc
import NIOCore
import NIOPosix
import Testing

/// ``MediaFetcher`` (what a simulated device does with a LOAD's URL) against a real
/// ``MediaFileServer``, a silent listener and a closed port.
@Suite("MediaFetcher over loopback")
struct MediaFetcherTests {
    /// A served temporary file of `size` bytes; removed by `cleanup`.
    static func serve(size: Int, group: EventLoopGroup) async throws -> (MediaFileServer, url: String, cleanup: () -> Void) {
        var template = Array("/tmp/castline-fetch-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }), let real = realpath(made, nil) else {
            throw MediaFetchTestFailure()
        }
        let directory = String(cString: real)
        free(real)
        let path = "\(directory)/clip.mp4"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0, ftruncate(fd, off_t(size)) == 0 else { throw MediaFetchTestFailure() }
        close(fd)
        let server = try await MediaFileServer.start(host: "127.0.0.1", group: group, logSystem: LogSystem())
        let published = try server.publish(["clip.mp4": ServedFile(path: path, contentType: "video/mp4")], peers: ["127.0.0.1"])
        return (server, published.url(for: "clip.mp4"), { unlink(path); rmdir(directory) })
    }

    /// Runs `body` on a one-thread event-loop group that is shut down afterwards, also when `body` throws.
    static func withGroup(_ body: (MultiThreadedEventLoopGroup) async throws -> Void) async throws {
        try await withTeardown(MultiThreadedEventLoopGroup(numberOfThreads: 1), { try await $0.shutdownGracefully() }, body: body)
    }

    @Test("GET with Range: 206, Content-Range, Content-Type and at most n bytes")
    func fetchesRange() async throws {
        try await Self.withGroup { group in
            let (server, url, cleanup) = try await Self.serve(size: 300_000, group: group)
            try await withTeardown(server, { await $0.stop(); cleanup() }) { server in
                let result = try await MediaFetcher.fetch(url: url, group: group).get()
                var expected = MediaFetchResult(url: url, status: 206, contentRange: "bytes 0-65535/300000",
                                                contentType: "video/mp4", bytes: 65536, error: nil)
                expected.prefix = [UInt8](repeating: 0, count: MediaFetchResult.prefixLength)   // the file is zeros
                expected.allowOrigin = "*"   // the media server answers every origin (CORS)
                #expect(result == expected)
                #expect(result.jsonValue["status"]?.int == 206 && result.jsonValue["error"]?.isNull == true)
                let small = try await MediaFetcher.fetch(url: url, rangeBytes: 10, group: group).get()
                #expect(small.bytes == 10 && small.contentRange == "bytes 0-9/300000" && small.prefix.count == 10)
                let missing = try await MediaFetcher.fetch(url: "http://127.0.0.1:\(server.port)/nope?x=1#f", group: group).get()
                #expect(missing.status == 404 && missing.error == nil)
                #expect(server.requests.contains { $0.range == "bytes=0-65535" && $0.status == 206 })
                let elsewhere = try await MediaFetcher.fetch(url: url, group: group, source: "127.0.0.2").get()
                #expect(elsewhere.status == 404, "fetched from the device's own address, another one is refused")
                #expect(server.requests.last?.peer.hasPrefix("127.0.0.2:") == true)
            }
        }
    }

    @Test("bad URLs, https, a closed port and a silent server are results, not failures")
    func failures() async throws {
        try await Self.withGroup { group in
            for (url, error) in [("https://127.0.0.1/a.mp4", "unsupported scheme https"),
                                 ("ftp://127.0.0.1/a.mp4", "unsupported scheme ftp"),
                                 ("media.local/a.mp4", "invalid URL"), ("http://[::1/a", "invalid URL"),
                                 ("http://127.0.0.1:99999/a", "invalid port in URL"), ("http:///a", "invalid URL")] {
                let result = try await MediaFetcher.fetch(url: url, group: group).get()
                #expect(result.error == error && result.status == nil, "\(url)")
            }
            let refused = try await MediaFetcher.fetch(url: "http://127.0.0.1:1/a.mp4", group: group).get()
            #expect(refused.status == nil && refused.error != nil)
            let silent = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
            let start = ContinuousClock.now
            let slow = try await MediaFetcher.fetch(url: "http://127.0.0.1:\(silent.localAddress?.port ?? 0)/a.mp4",
                                                    timeout: 0.3, group: group).get()
            #expect(slow.error == "timed out after 0.3 s" && slow.status == nil)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
            try await silent.close()
        }
    }
}

private struct MediaFetchTestFailure: Error {}
