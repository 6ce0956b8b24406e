import CastTestSupport
import CastCore
import CastLogging
import CastReceiverSimServer
import NIOPosix
import SystemCrypto
import Testing

/// A running simulator for socket tests: `count` devices in the ports layout, an event-loop group
/// for test clients, helpers to connect and to run control commands, and cleanup.
struct SimulatorRig {

    let simulator: ReceiverSimulator
    let devices: [SimulatedDeviceConfiguration]
    let group: MultiThreadedEventLoopGroup

    /// `count` devices on free ports, without mDNS, on one event loop, logging into a private log system.
    static func start(count: Int = 1, _ adjust: (inout SimulatorSettings) -> Void = { _ in }) async throws -> SimulatorRig {
        var settings = SimulatorSettings()
        settings.advertise = false
        settings.threads = 1
        adjust(&settings)
        if settings.authorityDirectory == nil, settings.authority == nil { settings.authority = TestAuthority.main }
        let simulator = try await ReceiverSimulator.startOnFreePorts(count: count, settings: settings, logSystem: LogSystem())
        return SimulatorRig(simulator: simulator, devices: simulator.devices.map(\.configuration),
                            group: MultiThreadedEventLoopGroup(numberOfThreads: 1))
    }

    func connect(_ index: Int = 0, answersPings: Bool = true, tap: WireTap? = nil) async throws -> TestCastClient {
        try await TestCastClient.connect(host: devices[index].address, port: devices[index].castPort, group: group,
                                         answersPings: answersPings, tap: tap)
    }

    /// Connects, CONNECTs to receiver-0 and checks GET_STATUS is answered: the device serves.
    /// The client is closed before this returns: a close left to a task of its own could run
    /// after the test's `stop()` has shut the loops down (a crash under SWIFTNIO_STRICT).
    func serves(_ index: Int = 0) async throws -> Bool {
        let client = try await connect(index)
        do {
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 99])
            let served = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)?["requestId"]?.int == 99
            await client.close()
            return served
        } catch {
            await client.close()
            throw error
        }
    }

    @discardableResult
    func control(_ command: JSONValue) async throws -> JSONValue {
        let reply = try await simulator.control.execute(command).get()
        #expect(reply["ok"] == true, "control \(command.serialized()) → \(reply.serialized())")
        return reply
    }

    func stop() async throws {
        await simulator.stop()
        try await group.shutdownGracefully()
    }
}

/// Starts a ``SimulatorRig``, runs `body` with it and awaits ``SimulatorRig/stop()`` afterwards,
/// also when `body` throws (a failed `#require`).
func withSimulatorRig(count: Int = 1, settings adjust: (inout SimulatorSettings) -> Void = { _ in },
                      _ body: (SimulatorRig) async throws -> Void) async throws {
    try await withTeardown(try await SimulatorRig.start(count: count, adjust), { try await $0.stop() }, body: body)
}
