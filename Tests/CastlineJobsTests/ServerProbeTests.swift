import CastCore
import CastLogging
import CastSender
import CastTestSupport
import CastHTTP
@testable import CastlineJobs
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A failed cast's server probed once, within its bounds: a port nothing listens on is found
/// down with one `ServerProbe` record naming `scheme://host:port`; a second failure within the
/// interval probes nothing. Real sockets on loopback.
@Suite(.timeLimit(.minutes(1)))
struct ServerProbeTests {
    static let tv = CastDevice(id: "tv", friendlyName: "Lobby TV", host: "127.0.0.1", port: 8009)

    /// A loopback port that was free a moment ago (bound, then closed): nothing listens there.
    func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func theServerOfAURLIsItsSchemeHostAndPort() throws {
        #expect(ServerProbe.server(of: try #require(HTTPURL("http://10.0.0.5/board.html"))) == "http://10.0.0.5:80")
        #expect(ServerProbe.server(of: try #require(HTTPURL("https://media.example/a.mp4?x=1"))) == "https://media.example:443")
        #expect(ServerProbe.server(of: try #require(HTTPURL("http://[::1]:8000/a"))) == "http://[::1]:8000")
    }

    @Test func aServerThatRefusesIsDownOnceAndASecondFailureProbesNothing() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (logs, sink) = try MemoryLogSink.makeSystem()
        let probe = ServerProbe(group: group, logSystem: logs)
        let port = try closedPort()
        let url = "http://127.0.0.1:\(port)/board.html"
        await probe.castFailed(url, device: Self.tv, failure: "LOAD_FAILED")
        await probe.castFailed(url, device: Self.tv, failure: "LOAD_FAILED")
        #expect(logs.flush())
        let records = sink.records.filter { $0.className == "ServerProbe" }
        #expect(records.count == 1, "one probe per server per interval: \(records.map(\.message))")
        let down = try #require(records.first)
        #expect(down.level == .warning && down.fields["serverDown"] == .string("http://127.0.0.1:\(port)"))
        #expect(down.fields["reachable"] == .bool(false) && down.fields["probe"] == "HEAD" && down.fields["device"] == "tv")
        #expect(down.fields["castFailure"] == "LOAD_FAILED" && down.fields["elapsedMs"] != nil)
        // Not an http(s) URL: nothing to probe.
        await probe.castFailed("/srv/media/a.mp4", device: Self.tv, failure: "LOAD_FAILED")
        #expect(logs.flush())
        #expect(sink.records.filter { $0.className == "ServerProbe" }.count == 1)
        try await group.shutdownGracefully()
    }
}
