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

/// The API's listeners end in the `ListenerErrorHandler` every listening socket has (CastHTTP's
/// one type, as the media server's): a failed accept (out of descriptors) pauses the listener
/// instead of spinning or closing it. What the handler does is `ListenerErrorHandlerTests`'.
@Suite struct APIServerListenerTests {
    /// An API server on a scratch socket and 127.0.0.1:0 (with a token), its hub, and how to end them.
    struct Rig {
        let folder = ScratchFolder("api-listeners")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let token = "listener-test-token-0123456789"
        let daemon: Daemon
        let plane: ControlPlane
        let server: APIServer

        init(logSystem: LogSystem = LogSystem()) async throws {
            let tokenFile = folder.path + "/token"
            let fd = open(tokenFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = "\(token)\n".withCString { write(fd, $0, strlen($0)) }
            close(fd)
            let config = CastlineConfiguration()
            let layers = LogRuleLayers(config: nil, configSource: "test", environment: nil, commandLine: nil, defaultMinimum: .warning)
            daemon = Daemon(config: config, providers: [], logSystem: logSystem, group: group, logLayers: layers, jobStore: nil, linkRetryDelay: nil)
            plane = ControlPlane(daemon: daemon, config: config, logSystem: logSystem, group: group)
            server = try await APIServer.start(plane: plane, events: daemon.events, metrics: { "" }, socket: folder.path + "/castline.sock",
                                               listen: "127.0.0.1:0", token: try APIToken(file: tokenFile), tls: nil,
                                               group: group, logSystem: logSystem)
        }

        func stop() async throws {
            await server.stop()
            await plane.shutdown()
            await daemon.registry.shutdown(stopping: [])
            try await group.shutdownGracefully()
            folder.remove()
        }
    }

    @Test func bothListenersEndInTheListenerErrorHandler() async throws {
        let rig = try await Rig()
        #expect(rig.server.listeners.count == 2)
        for listener in rig.server.listeners {
            let handler = try? await listener.pipeline.handler(type: ListenerErrorHandler.self).get()
            #expect(handler != nil, "\(String(describing: listener.localAddress))")
        }
        try await rig.stop()
    }

    /// As `ListenerErrorHandlerTests.outOfDescriptors` for a bare listener: a failed accept
    /// (EMFILE) on either API listener is logged, with the listener's name and the hint, accepting
    /// pauses and resumes, and the CLI's client is answered afterwards on both.
    @Test func anAcceptErrorOnEitherListenerIsLoggedAndTheListenerKeepsAccepting() async throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let rig = try await Rig(logSystem: system)
        for listener in rig.server.listeners {
            let name = listener.localAddress.map { $0.port.map { "127.0.0.1:\($0)" } ?? $0.pathname ?? "?" } ?? "?"
            listener.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept4"))
            #expect(try await pollUntil(timeout: 60) { try await !listener.getOption(.autoRead).get() }, "\(name): accepts paused")
            #expect(try await pollUntil(timeout: 60) { try await listener.getOption(.autoRead).get() }, "\(name): accepting again")
            #expect(try await pollUntil(timeout: 60) {
                _ = system.flush()
                return sink.records.contains { $0.level == .error && $0.message.contains("\(name): cannot accept connections") }
            }, "\(name): the failed accept is logged")
        }
        let errors = sink.records.filter { $0.level == .error }
        #expect(errors.count == 2 && errors.allSatisfy { $0.message.contains("LimitNOFILE") && $0.fields["errno"] == .int(EMFILE) })
        let ports = rig.server.listeners.compactMap { $0.localAddress?.port }
        let port = try #require(ports.first)
        for endpoint in [ControlClient.Endpoint.unix(rig.folder.path + "/castline.sock"), .tcp(host: "127.0.0.1", port: port, token: rig.token)] {
            let response = try? ControlClient(endpoint: endpoint, timeout: 30).send("GET", "/v1/devices")
            #expect(response?.status == 200, "\(endpoint)")
        }
        try await rig.stop()
    }
}
