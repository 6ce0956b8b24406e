import CastTestSupport
import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
@testable import CastTransport
import NIOCore
import NIOPosix
import SystemCrypto
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// CastConnection against `castline sim`'s devices over real loopback TLS.
@Suite("CastConnection over loopback TLS", .timeLimit(.minutes(1)))
struct CastConnectionTests {

    static func simulator(_ adjust: (inout SimulatorSettings) -> Void = { _ in }) async throws -> ReceiverSimulator {
        var settings = SimulatorSettings()
        settings.advertise = false
        settings.threads = 1
        settings.authority = TestAuthority.main
        adjust(&settings)
        return try await ReceiverSimulator.startOnFreePorts(settings: settings, logSystem: LogSystem())
    }

    static func options(_ adjust: (inout CastConnectionOptions) -> Void = { _ in }) -> CastConnectionOptions {
        var options = CastConnectionOptions()
        options.logSystem = LogSystem()
        adjust(&options)
        return options
    }

    /// CONNECT to receiver-0, then GET_STATUS as a request of the connection; the JSON of the
    /// RECEIVER_STATUS that answers it (its `requestId` is the one the connection gave).
    static func receiverStatus(_ connection: CastConnection) async throws -> JSONValue {
        try await connection.send(CastMessage(source: "sender-0", destination: "receiver-0", namespace: .connection, json: ["type": "CONNECT"]))
        let request = connection.request(source: "sender-0", destination: "receiver-0", namespace: .receiver, type: "GET_STATUS",
                                         timeout: 5, build: { ["type": "GET_STATUS", "requestId": .int(Int64($0.rawValue))] },
                                         map: { .success($0.json) })
        return try await request.value()
    }

    @Test("connects, CONNECT + GET_STATUS gets RECEIVER_STATUS; the peer certificate is the device's")
    func connectAndStatus() async throws {
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options(), group: group)
        #expect(connection.deviceAuth == .notChecked)
        let certificate = try Certificate(derBytes: connection.peerCertificateDER)
        #expect(certificate.commonName == device.uuid)
        let status = try await Self.receiverStatus(connection)
        #expect(status["type"]?.string == "RECEIVER_STATUS")
        #expect(status["requestId"]?.int == 1, "the connection's first request id")
        await connection.close()
        #expect(await connection.closeReason == .local)
        await #expect(throws: CastTransportError.closed(endpoint: connection.endpoint, reason: .local)) {
            try await connection.send(CastMessage(source: "sender-0", destination: "receiver-0", namespace: .connection, json: ["type": "CLOSE"]))
        }
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("device auth: required and verified with the simulator's root; refused with a foreign root; warn goes on")
    func deviceAuth() async throws {
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let trusted = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options {
            $0.deviceAuth = .require
            $0.trustAnchors = [simulator.authority.rootCertificate]
        }, group: group)
        guard case .verified = trusted.deviceAuth else { Issue.record("not verified: \(trusted.deviceAuth)"); return }
        await trusted.close()

        let foreign = TestAuthority.other.rootCertificate
        do {
            let refused = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options {
                $0.deviceAuth = .require
                $0.trustAnchors = [foreign]
            }, group: group)
            Issue.record("connected with a foreign root: \(refused.deviceAuth)")
            await refused.close()
        } catch {
            guard case .deviceAuthFailed(_, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(reason.contains("chain"), "\(reason)")
        }

        let warned = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options {
            $0.deviceAuth = .warn
            $0.trustAnchors = [foreign]
        }, group: group)
        guard case .failed = warned.deviceAuth else { Issue.record("warn mode: \(warned.deviceAuth)"); return }
        #expect(warned.isActive)
        await warned.close()
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("connects to a device of either TLS profile: device auth verified, GET_STATUS answered, the certificate's key as the profile says",
          arguments: DeviceTLSProfile.allCases)
    func tlsProfiles(profile: DeviceTLSProfile) async throws {
        let simulator = try await Self.simulator { $0.tlsProfile = profile }
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options {
            $0.deviceAuth = .require
            $0.trustAnchors = [simulator.authority.rootCertificate]
        }, group: group)
        guard case .verified = connection.deviceAuth else { Issue.record("not verified: \(connection.deviceAuth)"); return }
        let certificate = try Certificate(derBytes: connection.peerCertificateDER)
        #expect(certificate.publicKeyKind == (profile == .modern ? .p256 : .rsa(bits: 2048)))
        #expect(try await Self.receiverStatus(connection)["type"]?.string == "RECEIVER_STATUS")
        await connection.close()
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("a device that stops answering PINGs is declared lost after the heartbeat timeout")
    func heartbeatTimeout() async throws {
        let simulator = try await Self.simulator { $0.initialFaults = DeviceFaults(ignorePings: true) }
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options {
            $0.heartbeatInterval = 0.2
            $0.heartbeatTimeout = 0.8
        }, group: group)
        let reason = await connection.closeReason
        guard case .heartbeatTimeout = reason else { Issue.record("ended with \(reason)"); return }
        // The stream finished with the connection.
        var remaining = 0
        for await _ in connection.messages { remaining += 1 }
        #expect(remaining == 0)
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("the device dropping the connection ends it as remoteClosed and finishes the stream")
    func remoteClose() async throws {
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options(), group: group)
        // A reply first: the device's side of the handshake is done too (connect returns once
        // *our* side is; a drop before the device's is a TLS error, not a remote close).
        #expect(try await Self.receiverStatus(connection)["type"]?.string == "RECEIVER_STATUS")
        _ = try await simulator.control.execute(["command": "drop"]).get()
        let reason = await connection.closeReason
        #expect(reason == .remoteClosed, "closed: \(reason)")
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("a refused port is a connectFailed error naming the endpoint")
    func refused() async throws {
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        await simulator.stop()   // its ports are closed now
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            _ = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options(), group: group)
            Issue.record("connected to a stopped device")
        } catch {
            guard case .connectFailed(let endpoint, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(endpoint == "\(device.address):\(device.castPort)")
            // Said as what it is, not as NIO names the syscall step ("connection reset (error set)").
            #expect(reason == "connection refused (ECONNREFUSED): nothing accepts connections on that port", "\(reason)")
        }
        try await group.shutdownGracefully()
    }

    @Test("a connect that fails for want of descriptors says what to raise; other failures are given as they are")
    func descriptorShortageHint() {
        let emfile = CastConnection.connectFailureReason(IOError(errnoCode: EMFILE, reason: "socket"))
        #expect(emfile.contains("Too many open files") && emfile.contains("LimitNOFILE=") && emfile.contains("ulimit -n"), "\(emfile)")
        let enfile = CastConnection.connectFailureReason(IOError(errnoCode: ENFILE, reason: "socket"))
        #expect(enfile.contains("system is out of file descriptors"), "\(enfile)")
        let refused = CastConnection.connectFailureReason(IOError(errnoCode: ECONNREFUSED, reason: "connect"))
        #expect(!refused.contains("LimitNOFILE") && !refused.contains("(this process") && refused.contains("refused"), "\(refused)")
    }

    @Test("enqueue(flush: false) waits for the next flushed message; then both leave, in order")
    func unflushedWaitsForTheNextFlush() async throws {
        actor Flag {
            var isSet = false
            func set() { isSet = true }
        }
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: device.address, port: device.castPort, options: Self.options(), group: group)
        let flushed = Flag()
        // Each RECEIVER_STATUS's requestId, and whether the flushing send had started when it came.
        let reader = Task { () -> [(id: Int64?, afterFlush: Bool)] in
            var seen: [(id: Int64?, afterFlush: Bool)] = []
            for await inbound in connection.messages where inbound.message.namespace == .receiver {
                let json = inbound.payload?.json
                seen.append((json?["requestId"]?.int, await flushed.isSet))
                if seen.count == 2 { break }
            }
            return seen
        }
        connection.enqueue(CastMessage(source: "sender-0", destination: "receiver-0", namespace: .connection, json: ["type": "CONNECT"]),
                           flush: false)
        connection.enqueue(CastMessage(source: "sender-0", destination: "receiver-0", namespace: .receiver,
                                       json: ["type": "GET_STATUS", "requestId": 1]), flush: false)
        // The behaviour under test is that nothing leaves before a flush: a reply to a message sent
        // at once would come well within this window (loopback), and would be marked as early.
        try await Task.sleep(for: .milliseconds(500))
        await flushed.set()
        connection.enqueue(CastMessage(source: "sender-0", destination: "receiver-0", namespace: .receiver,
                                       json: ["type": "GET_STATUS", "requestId": 2]))
        let seen = await reader.value
        let ids = seen.map { $0.id }
        let allAfterFlush = seen.allSatisfy { $0.afterFlush }
        #expect(ids == [1, 2], "both requests answered, in order")
        #expect(allAfterFlush, "a request went out before the flush: \(seen)")
        await connection.close()
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("a host name still goes through the resolver: localhost connects")
    func hostNameConnects() async throws {
        let simulator = try await Self.simulator()
        let device = simulator.devices[0].configuration
        try #require(device.address == "127.0.0.1", "the first simulated device is expected on 127.0.0.1, the address localhost names")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let connection = try await CastConnection.connect(host: "localhost", port: device.castPort, options: Self.options(), group: group)
        #expect(connection.endpoint == "localhost:\(device.castPort)")
        #expect(try await Self.receiverStatus(connection)["type"]?.string == "RECEIVER_STATUS")
        await connection.close()
        await simulator.stop()
        try await group.shutdownGracefully()
    }

    @Test("IP literals connect without a resolver; names and non-addresses go to it",
          arguments: [("127.0.0.1", "127.0.0.1"), ("10.1.2.3", "10.1.2.3"), ("::1", "::1"), ("[::1]", "::1"),
                      ("fe80::1", "fe80::1"), ("localhost", nil), ("cafe", nil), ("deadbeef", nil), ("", nil), ("1234", nil),
                      ("256.1.1.1", nil), ("cast-tv.local", nil), ("[::1", nil)] as [(String, String?)])
    func ipLiterals(host: String, expected: String?) {
        let address = CastConnection.ipLiteralAddress(host: host, port: 8009)
        #expect(address?.ipAddress == expected)
        if address != nil { #expect(address?.port == 8009) }
    }


    @Test("a peer that never answers the ClientHello is a tlsFailed error after the connect timeout, not a hang",
          arguments: ["127.0.0.1", "localhost"])
    func handshakeTimeout(host: String) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try await SilentListener.start(group: group)
        let port = listener.port
        let started = MonotonicClock.seconds()
        do {
            // 1 s: the timeout also bounds the TCP connect (and resolving "localhost"), which must
            // not be what runs out on a loaded machine.
            _ = try await CastConnection.connect(host: host, port: port, options: Self.options { $0.connectTimeout = 1 }, group: group)
            Issue.record("connected to a peer without TLS")
        } catch {
            guard case .tlsFailed(let endpoint, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(endpoint == "\(host):\(port)")
            #expect(reason.contains("no handshake within 1.0 s"))
        }
        #expect(MonotonicClock.seconds() - started >= 1)
        await listener.stop()
        try await group.shutdownGracefully()
    }

    @Test("a peer that closes at once is a connectFailed or tlsFailed error naming the endpoint, not a hang", arguments: ["127.0.0.1", "localhost"])
    func handshakeClosed(host: String) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try await SilentListener.start(group: group, closeAtOnce: true)
        let port = listener.port
        do {
            _ = try await CastConnection.connect(host: host, port: port, options: Self.options { $0.connectTimeout = 30 }, group: group)
            Issue.record("connected to a peer that closed")
        } catch {
            // The handlers go in after TCP is up, so the close can come before them ("closed while
            // it was being set up") or during the handshake.
            switch error {
            case .tlsFailed(let endpoint, _), .connectFailed(let endpoint, _): #expect(endpoint == "\(host):\(port)")
            default: Issue.record("wrong error \(error)")
            }
        }
        await listener.stop()
        try await group.shutdownGracefully()
    }
}
