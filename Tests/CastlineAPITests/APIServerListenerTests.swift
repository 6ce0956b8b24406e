import CastLogging
import CastHTTP
@testable import CastlineAPI
import CastlineConfig
import CastlineDaemon
import CastTestSupport
import NIOCore
import NIOPosix
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The API's listeners end in the `ListenerErrorHandler` every listening socket has (CastProtocol's
/// one type, as the media server's): a failed accept (out of descriptors) pauses the listener
/// instead of spinning or closing it. What the handler does is `ListenerErrorHandlerTests`'.
@Suite struct APIServerListenerTests {
    @Test func bothListenersEndInTheListenerErrorHandler() async throws {
        let folder = ScratchFolder("api-listeners")
        defer { folder.remove() }
        let tokenFile = folder.path + "/token"
        let fd = open(tokenFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = "listener-test-token-0123456789\n".withCString { write(fd, $0, 31) }
        close(fd)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let logSystem = LogSystem()
        let config = CastlineConfiguration()
        let layers = LogRuleLayers(config: nil, configSource: "test", environment: nil, commandLine: nil, defaultMinimum: .warning)
        let daemon = Daemon(config: config, providers: [], logSystem: logSystem, group: group, logLayers: layers, jobStore: nil, linkRetryDelay: nil)
        let plane = ControlPlane(daemon: daemon, config: config, logSystem: logSystem, group: group)
        let server = try await APIServer.start(plane: plane, events: daemon.events, metrics: { "" }, socket: folder.path + "/castline.sock",
                                               listen: "127.0.0.1:0", token: try APIToken(file: tokenFile), tls: nil,
                                               group: group, logSystem: logSystem)
        #expect(server.listeners.count == 2)
        for listener in server.listeners {
            let handler = try? await listener.pipeline.handler(type: ListenerErrorHandler.self).get()
            #expect(handler != nil, "\(String(describing: listener.localAddress))")
        }
        await server.stop()
        await plane.shutdown()
        await daemon.registry.shutdown(stopping: [])
        try await group.shutdownGracefully()
    }
}
