import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import Glibc
import NIOCore
import NIOPosix
import Testing

/// The simulator on real loopback sockets with real TLS: one device per test on free ports.
@Suite("ReceiverSimulator over loopback TLS")
struct ReceiverSimulatorTests {
    @Test("CONNECT + GET_STATUS gets RECEIVER_STATUS; PING gets PONG")
    func statusAndHeartbeat() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 7])
            let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
            #expect(status?["requestId"]?.int == 7)
            #expect(status?["status"]?["volume"]?["level"]?.double != nil)
            try await client.send(namespace: .heartbeat, ["type": "PING"])
            #expect(await client.next(type: "PONG", namespace: .heartbeat) != nil)
            await client.close()
        }
    }

    @Test("an oversized frame closes the connection; the device keeps serving others")
    func oversizedFrameCloses() async throws {
        try await withSimulatorRig { rig in
            let bad = try await rig.connect()
            try await bad.sendRaw([0x00, 0x01, 0x00, 0x01] + [UInt8](repeating: 0x41, count: 64))
            #expect(await bad.waitClosed())
            let good = try await rig.connect()
            try await good.send(namespace: .connection, ["type": "CONNECT"])
            try await good.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 1])
            #expect(await good.next(type: "RECEIVER_STATUS", namespace: .receiver) != nil)
            await good.close()
        }
    }

    @Test("a garbage frame body is dropped and reported; the connection stays usable")
    func garbageBodyKeepsConnection() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.sendRaw([0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 2])
            #expect(await client.next(type: "RECEIVER_STATUS", namespace: .receiver)?["requestId"]?.int == 2)
            await client.close()
        }
    }

    @Test("a sender that never answers is PINGed, then dropped after the heartbeat timeout")
    func silentSenderDropped() async throws {
        try await withSimulatorRig(settings: { settings in
            settings.pingInterval = 0.2
            settings.heartbeatTimeout = 0.6
        }) { rig in
            let client = try await TestCastClient.connect(host: rig.devices[0].address, port: rig.devices[0].castPort, group: rig.group,
                                                         answersPings: false)
            #expect(await client.next(type: "PING", namespace: .heartbeat, timeout: 5) != nil)
            #expect(await client.waitClosed(timeout: 10))
        }
    }

    @Test("control: ignore-pings stops PONGs; fail-next-load makes LOAD fail with the code")
    func controlFaults() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            #expect(try await rig.simulator.control.execute(text: #"{"command":"ignore-pings"}"#).get()["ok"] == true)
            try await client.send(namespace: .heartbeat, ["type": "PING"])
            #expect(await client.next(type: "PONG", namespace: .heartbeat, timeout: 0.5) == nil)
            let unknown = try await rig.simulator.control.execute(text: #"{"command":"explode"}"#).get()
            #expect(unknown["ok"] == false)
            #expect(unknown["error"]?.string?.contains("explode") == true)
            await client.close()
        }
    }
}
