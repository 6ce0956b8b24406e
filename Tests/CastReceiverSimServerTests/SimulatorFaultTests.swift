import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTestSupport
import NIOCore
import NIOPosix
import Testing

/// Every fault of the control surface (and the matching flags) on real loopback TLS. No test
/// depends on the machine's speed: waits are bounded ("within N s"), and the only timing
/// assertions are lower bounds the simulator itself guarantees (a delayed reply is never early).
@Suite("Simulator faults over loopback TLS")
struct SimulatorFaultTests {
    /// CONNECT, LAUNCH CC1AD845, CONNECT to the app, LOAD; returns the app's transportId.
    static func startPlayback(_ client: TestCastClient, contentID: String = "http://media.local/a.mp4") async throws -> String? {
        try await client.send(namespace: .connection, ["type": "CONNECT"])
        try await client.send(namespace: .receiver, ["type": "LAUNCH", "appId": "CC1AD845", "requestId": 1])
        guard let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver),
              let transport = status["status"]?["applications"]?[0]?["transportId"]?.string else { return nil }
        try await client.send(namespace: .connection, destination: transport, ["type": "CONNECT"])
        try await client.send(namespace: .media, destination: transport, [
            "type": "LOAD", "requestId": 2, "autoplay": true,
            "media": ["contentId": .string(contentID), "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 600],
        ])
        return transport
    }

    @Test("drop: every connection closes now; a new connection is served")
    func dropNow() async throws {
        try await withSimulatorRig { rig in
            let first = try await rig.connect()
            let second = try await rig.connect()
            try await first.send(namespace: .connection, ["type": "CONNECT"])
            try await rig.control(["command": "drop"])
            #expect(await first.waitClosed(timeout: 10))
            #expect(await second.waitClosed(timeout: 10))
            #expect(try await rig.serves())
        }
    }

    @Test("drop after N s: the connection is served until then, closed after; later connections too")
    func dropAfter() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await rig.control(["command": "drop", "after": 1.5])
            // On a loaded machine the 1.5 s can pass before these writes: a write to the dropped
            // connection fails, which is the drop this test waits for.
            try? await client.send(namespace: .connection, ["type": "CONNECT"])
            try? await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 5])
            let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
            if let status { #expect(status["requestId"]?.int == 5) } else { #expect(!client.channel.isActive, "neither answered nor dropped") }
            #expect(await client.waitClosed(timeout: 15))
            let later = try await rig.connect()
            #expect(await later.waitClosed(timeout: 15), "a connection opened after the command is dropped too")
        }
    }

    @Test("--drop-after as a start-up fault closes each connection after N s")
    func dropAfterFlag() async throws {
        try await withSimulatorRig(settings: { $0.initialFaults = DeviceFaults(ignorePings: false, replyDelay: 0, dropAfter: 0.5) }) { rig in
            let client = try await rig.connect()
            #expect(await client.waitClosed(timeout: 15))
        }
    }

    @Test("delay: replies arrive no earlier than the delay; 0 turns it off")
    func replyDelay() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await rig.control(["command": "delay", "seconds": 0.6])
            let start = ContinuousClock.now
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 3])
            let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver, timeout: 15)
            #expect(status?["requestId"]?.int == 3)
            #expect(ContinuousClock.now - start >= .milliseconds(600))
            try await rig.control(["command": "delay", "seconds": 0])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 4])
            #expect(await client.next(type: "RECEIVER_STATUS", namespace: .receiver)?["requestId"]?.int == 4)
            // A delay no Double can schedule is clamped, not a crash.
            try await rig.control(["command": "delay", "seconds": 1e300])
            try await rig.control(["command": "delay", "seconds": 0])
            await client.close()
        }
    }

    @Test("reboot: every connection gone, the device refuses connections while down, is back after N s with no app")
    func reboot() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            #expect(try await Self.startPlayback(client) != nil)
            // Down long enough for the checks below to run while it is down, even on a loaded machine.
            try await rig.control(["command": "reboot", "downFor": 4])
            #expect(await client.waitClosed(timeout: 10))
            let listing = try await rig.control(["command": "list"])
            #expect(listing["devices"]?[0]?["down"] == true)
            await #expect(throws: (any Error).self) { _ = try await rig.connect() }
            // A connection attempt every 0.1 s until the device is back.
            let back = await pollValue(timeout: 14, every: .milliseconds(100)) { try? await rig.connect() }
            let again = try #require(back, "device not back 10 s after the end of a 4 s reboot")
            try await again.send(namespace: .connection, ["type": "CONNECT"])
            try await again.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 8])
            let status = await again.next(type: "RECEIVER_STATUS", namespace: .receiver)
            #expect(status?["requestId"]?.int == 8)
            #expect(status?["status"]?["applications"]?.array?.isEmpty ?? true, "an app survived the reboot")
            #expect(try await rig.control(["command": "list"])["devices"]?[0]?["down"] == false)
            await again.close()
        }
    }

    @Test("transfer: the session moves to the other device at the same position; the source stops its app")
    func transfer() async throws {
        try await withSimulatorRig(count: 2) { rig in
            let source = try await rig.connect(0)
            _ = try #require(try await Self.startPlayback(source, contentID: "http://media.local/transfer.mp4"))
            let playing = await source.next(timeout: 10) { message in
                message.namespace == .media && (message.payload.text?.contains("\"PLAYING\"") ?? false)
            }
            #expect(playing != nil)
            let before = try await rig.control(["command": "list"])
            let positionBefore = before["devices"]?[0]?["state"]?["media"]?["currentTime"]?.double ?? -1
            #expect(positionBefore >= 0)
            try await rig.control(["command": "transfer", "device": 0, "to": 1])

            // The source's sender hears that the app is gone.
            let stopped = await source.next(type: "RECEIVER_STATUS", namespace: .receiver, timeout: 10)
            #expect(stopped != nil)
            #expect(stopped?["status"]?["applications"]?.array?.isEmpty ?? true)

            let target = try await rig.connect(1)
            try await target.send(namespace: .connection, ["type": "CONNECT"])
            try await target.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 1])
            let status = await target.next(type: "RECEIVER_STATUS", namespace: .receiver)
            let app = status?["status"]?["applications"]?[0]
            #expect(app?["appId"]?.string == "CC1AD845")
            let transport = try #require(app?["transportId"]?.string)
            try await target.send(namespace: .connection, destination: transport, ["type": "CONNECT"])
            try await target.send(namespace: .media, destination: transport, ["type": "GET_STATUS", "requestId": 2])
            let media = await target.next(type: "MEDIA_STATUS", namespace: .media)
            let entry = media?["status"]?[0]
            #expect(entry?["media"]?["contentId"]?.string == "http://media.local/transfer.mp4")
            #expect((entry?["currentTime"]?.double ?? -1) >= positionBefore)
            #expect(entry?["playerState"]?.string == "PLAYING" || entry?["playerState"]?.string == "BUFFERING")
            await source.close()
            await target.close()
        }
    }

    @Test("transfer without a session, to itself or to no device is refused with a reason")
    func transferRefused() async throws {
        try await withSimulatorRig(count: 2) { rig in
            let none = try await rig.simulator.control.execute(["command": "transfer", "device": 0, "to": 1]).get()
            #expect(none["ok"] == false)
            #expect(none["error"]?.string?.contains("no session") == true)
            let itself = try await rig.simulator.control.execute(["command": "transfer", "device": 0, "to": 0]).get()
            #expect(itself["ok"] == false)
            let nowhere = try await rig.simulator.control.execute(["command": "transfer", "device": 0, "to": 7]).get()
            #expect(nowhere["ok"] == false)
        }
    }

    @Test("stop-app: senders hear the app stopped, as if another sender stopped it")
    func stopApp() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            _ = try #require(try await Self.startPlayback(client))
            try await rig.control(["command": "stop-app"])
            let status = await client.next(timeout: 10) { message in
                guard message.namespace == .receiver, let text = message.payload.text, let json = try? JSONValue.parse(text) else { return false }
                return json["type"]?.string == "RECEIVER_STATUS" && (json["status"]?["applications"]?.array ?? []).isEmpty
            }
            #expect(status != nil)
            await client.close()
        }
    }

    @Test("push: an arbitrary message reaches the connected sender")
    func push() async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 1])
            _ = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
            try await rig.control(["command": "push", "namespace": "urn:x-cast:com.google.cast.receiver",
                                   "payload": ["type": "SURPRISE", "requestId": 0, "value": 42]])
            let pushed = await client.next(type: "SURPRISE", namespace: .receiver)
            #expect(pushed?["value"]?.int == 42)
            await client.close()
        }
    }

    @Test("malformed frames reach the sender as the named defect; the device keeps serving", arguments: [
        "garbage", "oversized", "zero-length", "invalid-json", "unknown-namespace",
    ])
    func malformed(kind: String) async throws {
        try await withSimulatorRig { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "GET_STATUS", "requestId": 1])
            _ = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
            let reply = try await rig.control(["command": "malformed", "kind": .string(kind)])
            #expect(reply["sent"]?.int == 1)
            switch kind {
            case "garbage":
                #expect(await client.waitError { $0 is CastMessageDecodingError })
                #expect(client.channel.isActive, "a bad body inside a good frame must not cost the connection")
            case "oversized":
                #expect(await client.waitError { ($0 as? CastFrameError).map { if case .bodyTooLarge = $0 { true } else { false } } ?? false })
                #expect(await client.waitClosed())
            case "zero-length":
                #expect(await client.waitError { ($0 as? CastFrameError) == .emptyBody })
                #expect(await client.waitClosed())
            case "invalid-json":
                let message = await client.next { $0.namespace == .receiver && $0.payload.text.map { (try? JSONValue.parse($0)) == nil } == true }
                #expect(message != nil)
            default:
                let message = await client.next { $0.namespace.rawValue == "urn:x-cast:com.castline.sim.unknown" }
                #expect(message != nil)
            }
            #expect(try await rig.serves())
            await client.close()
        }
    }

    @Test("unknown commands, devices and malformed kinds are refused with a reason, not a crash")
    func badControlCommands() async throws {
        try await withSimulatorRig { rig in
            for (command, fragment) in [
                (#"{"command":"malformed","kind":"spicy"}"#, "garbage"),
                (#"{"command":"list","device":5}"#, "no device 5"),
                (#"{"command":"list","device":"kitchen"}"#, "kitchen"),
                (#"{"command":"push","namespace":"urn:x-cast:x"}"#, "payload"),
                (#"{"nope":1}"#, "missing \"command\""),
                (#"{"command":"list""#, "invalid JSON"),
            ] {
                let reply = try await rig.simulator.control.execute(text: command).get()
                #expect(reply["ok"] == false, "\(command)")
                #expect(reply["error"]?.string?.contains(fragment) == true, "\(command) → \(reply.serialized())")
            }
            #expect(try await rig.serves())
        }
    }
}
