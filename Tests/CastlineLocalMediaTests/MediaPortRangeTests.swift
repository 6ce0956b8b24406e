import CastCore
import CastLogging
@testable import CastlineLocalMedia
import CastSender
import CastTestSupport
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `media.port` as a range (a firewalled VLAN opens a few ports): the media server takes the
/// first free port of it, and says plainly when none is free. Real sockets on loopback.
@Suite("media.port range", .timeLimit(.minutes(1)))
struct MediaPortRangeTests {
    static let tv = CastDevice(id: "tv", friendlyName: "Lobby TV", host: "127.0.0.1", port: 8009)

    /// Publishes a scratch file for the TV through a publisher on `ports`; the served URL's port.
    func publish(ports: ClosedRange<Int>, group: MultiThreadedEventLoopGroup) async -> Result<Int, LocalMediaError> {
        let folder = ScratchFolder("media-port")
        defer { folder.remove() }
        let path = folder.path + "/clip.mp4"
        let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        _ = write(fd, "clip", 4)
        close(fd)
        let publisher = MediaPublisher(policy: .anywhere, ports: ports, group: group, logSystem: LogSystem())
        do throws(LocalMediaError) {
            let publication = try await publisher.publish(["clip.mp4": ServedFile(path: path, contentType: "video/mp4")], to: Self.tv, owner: "test")
            let url = publication.url(for: "clip.mp4")
            // http://127.0.0.1:PORT/…
            let port = url.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }
            await publisher.shutdown()
            return .success(Int(port) ?? -1)
        } catch {
            await publisher.shutdown()
            return .failure(error)
        }
    }

    @Test("a taken port is passed over: the next one of the range serves")
    func firstFreePort() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let taken = try await SilentListener.start(group: group)
        let result = await publish(ports: taken.port...min(taken.port + 20, 65535), group: group)
        guard case .success(let port) = result else { Issue.record("\(result)"); return }
        #expect(port > taken.port && port <= taken.port + 20, "served on \(port), \(taken.port) is taken")
        await taken.stop()
        try await group.shutdownGracefully()
    }

    @Test("no free port in the range: serve_failed naming media.port and the range")
    func noFreePort() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let a = try await SilentListener.start(group: group)
        let result = await publish(ports: a.port...a.port, group: group)
        guard case .failure(let error) = result else { Issue.record("served on a taken port: \(result)"); return }
        #expect(error.code == "serve_failed" && error.message.hasPrefix("cannot serve files on 127.0.0.1:\(a.port) (media.port): "), "\(error.message)")
        #expect(MediaPublisher.noPortMessage(address: "10.0.0.2", ports: 8100...8119, failure: "address in use")
                == "cannot serve files on 10.0.0.2: no port of media.port 8100-8119 is free (20 tried; the last: address in use); widen the range or free a port")
        await a.stop()
        try await group.shutdownGracefully()
    }
}
