import CastCore
import CastLogging
@testable import CastProtocol
import CastTestSupport
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@Suite("Heartbeat state machine")
struct HeartbeatStateMachineTests {
    @Test("silent peer: nothing before the interval, one PING per interval, timeout after the limit")
    func silentPeer() {
        var machine = HeartbeatStateMachine(pingInterval: 5, timeout: 10, now: 100)
        #expect(machine.tick(now: 104.9) == .none)
        #expect(machine.tick(now: 105) == .sendPing)
        #expect(machine.tick(now: 107) == .none)            // one PING per interval
        #expect(machine.tick(now: 110) == .sendPing)
        #expect(machine.tick(now: 110) == .none)
        #expect(machine.tick(now: 110.5) == .timedOut(silentFor: 10.5))
    }

    @Test("any inbound message resets the silence; time never goes backwards")
    func inboundResets() {
        var machine = HeartbeatStateMachine(pingInterval: 5, timeout: 10, now: 0)
        machine.inbound(now: 9)
        machine.inbound(now: 3)                              // late, out-of-order report
        #expect(machine.lastInbound == 9)
        #expect(machine.tick(now: 13) == .none)
        #expect(machine.tick(now: 14) == .sendPing)
        #expect(machine.tick(now: 19.5) == .timedOut(silentFor: 10.5))
    }

    @Test("next tick: when the PING falls due, then the timeout; later traffic moves it later")
    func nextTick() {
        var machine = HeartbeatStateMachine(pingInterval: 5, timeout: 10, now: 0)
        #expect(machine.nextTick == 5)
        #expect(machine.tick(now: machine.nextTick) == .sendPing)
        #expect(machine.nextTick == 10)                        // PING again while silent
        #expect(machine.tick(now: machine.nextTick) == .sendPing)
        #expect(abs(machine.nextTick - 10.001) < 1e-9)         // then the timeout
        guard case .timedOut(let silent) = machine.tick(now: machine.nextTick) else { Issue.record("no timeout"); return }
        #expect(silent > 10)
        var chatty = HeartbeatStateMachine(pingInterval: 5, timeout: 10, now: 0)
        chatty.inbound(now: 4)
        #expect(chatty.tick(now: 5) == .none)
        #expect(chatty.nextTick == 9)
        _ = chatty.tick(now: 9)                               // PING at 9
        chatty.inbound(now: 9.1)                              // PONG
        #expect(abs(chatty.nextTick - 14.1) < 1e-9)
        #expect(chatty.tick(now: 14.1) == .sendPing)
    }

    @Test("tick interval is a fifth of the ping interval, within 50 ms … 1 s")
    func tickInterval() {
        #expect(HeartbeatStateMachine(pingInterval: 5, timeout: 10, now: 0).tickInterval == 1)
        #expect(HeartbeatStateMachine(pingInterval: 1, timeout: 3, now: 0).tickInterval == 0.2)
        #expect(HeartbeatStateMachine(pingInterval: 0.01, timeout: 1, now: 0).tickInterval == 0.05)
    }
}

@Suite("CastHeartbeatTimeout")
struct CastHeartbeatTimeoutTests {
    @Test("the silence is printed to a tenth of a second, as %.1f would")
    func description() {
        #expect(CastHeartbeatTimeout(silentFor: 10.5, timeout: 10).description
            == "no message from the peer for 10.5 s (heartbeat timeout 10.0 s)")
        let cases: [(Double, String)] = [(0, "0.0"), (3, "3.0"), (10.04, "10.0"), (10.06, "10.1"), (9.96, "10.0"),
                                         (0.04, "0.0"), (-2.26, "-2.3"), (.infinity, "inf")]
        for (value, text) in cases { #expect(CastHeartbeatTimeout.oneDecimal(value) == text, "\(value)") }
    }
}

@Suite("CastHeartbeatHandler")
struct CastHeartbeatHandlerTests {
    final class FakeClock: Sendable {
        let now = Mutex<Double>(1000)
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
        func read() -> Double { now.withLock { $0 } }
    }

    func makeChannel(clock: FakeClock, interval: Double = 1, timeout: Double = 3) throws -> (EmbeddedChannel, LogSystem, MemoryLogSink) {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(CastHeartbeatHandler(pingInterval: interval, timeout: timeout, senderID: "sender-7",
                                                                            logSystem: system, clock: { clock.read() }))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8009)).wait()
        return (channel, system, sink)
    }

    /// Advances the fake clock and the embedded loop together, in tick-sized steps.
    func advance(_ channel: EmbeddedChannel, _ clock: FakeClock, by seconds: Double, step: Double = 0.2) {
        var left = seconds
        while left > 1e-9 {
            let d = min(step, left)
            clock.advance(d)
            channel.embeddedEventLoop.advanceTime(by: .nanoseconds(Int64(d * 1e9)))
            left -= d
        }
    }

    @Test("PING is answered with PONG to its sender; PONG and other heartbeat messages stop here; the rest pass")
    func answersPing() throws {
        let clock = FakeClock()
        let (channel, system, _) = try makeChannel(clock: clock)
        try channel.writeInbound(CastMessage(source: "receiver-0", destination: "*", namespace: .heartbeat, json: ["type": "PING"]))
        let pong = try #require(try channel.readOutbound(as: CastMessage.self))
        #expect(pong.namespace == .heartbeat && pong.sourceID == "sender-7" && pong.destinationID == "receiver-0")
        #expect(pong.payload.text.flatMap { try? JSONValue.parse($0) }?["type"] == "PONG")
        try channel.writeInbound(CastMessage(source: "receiver-0", destination: "sender-7", namespace: .heartbeat, json: ["type": "PONG"]))
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        let status = CastMessage(source: "receiver-0", destination: "sender-7", namespace: .receiver, json: ["type": "RECEIVER_STATUS"])
        try channel.writeInbound(status)
        #expect(try channel.readInbound(as: CastMessage.self) == status)
        _ = try channel.finish()
        system.shutdown()
    }

    @Test("a silent device is PINGed after the interval, then the channel closes with CastHeartbeatTimeout")
    func silentDevice() throws {
        let clock = FakeClock()
        let (channel, system, sink) = try makeChannel(clock: clock, interval: 1, timeout: 3)
        advance(channel, clock, by: 1.2)
        let ping = try #require(try channel.readOutbound(as: CastMessage.self))
        #expect(ping.namespace == .heartbeat && ping.sourceID == "sender-7" && ping.destinationID == "receiver-0")
        #expect(channel.isActive)
        var caught: Error?
        do { advance(channel, clock, by: 2.4); try channel.throwIfErrorCaught() } catch { caught = error }
        #expect((caught as? CastHeartbeatTimeout)?.timeout == 3)
        #expect(!channel.isActive)
        system.flush()
        #expect(sink.records.contains { $0.className == "CastHeartbeat" && $0.level == .warning })
        system.shutdown()
    }

    @Test("inbound traffic keeps the connection alive without PINGs")
    func trafficKeepsAlive() throws {
        let clock = FakeClock()
        let (channel, system, _) = try makeChannel(clock: clock, interval: 1, timeout: 3)
        for _ in 0..<20 {
            advance(channel, clock, by: 0.6)
            try channel.writeInbound(CastMessage(source: "receiver-0", destination: "*", namespace: .media, json: ["type": "MEDIA_STATUS"]))
            _ = try channel.readInbound(as: CastMessage.self)
        }
        #expect(try channel.readOutbound(as: CastMessage.self) == nil)
        #expect(channel.isActive)
        _ = try channel.finish()
        system.shutdown()
    }

    @Test("a device that answers every PING with PONG stays connected far past the timeout")
    func pongsKeepAlive() throws {
        let clock = FakeClock()
        let (channel, system, _) = try makeChannel(clock: clock, interval: 1, timeout: 3)
        var pings = 0
        for _ in 0..<100 {   // 20 s: more than six timeouts
            advance(channel, clock, by: 0.2)
            while let ping = try channel.readOutbound(as: CastMessage.self) {
                #expect(ping.payload.text.flatMap { try? JSONValue.parse($0) }?["type"] == "PING")
                pings += 1
                try channel.writeInbound(CastMessage(source: "receiver-0", destination: "sender-7", namespace: .heartbeat,
                                                     json: ["type": "PONG"]))
            }
        }
        #expect(channel.isActive)
        #expect(pings >= 15, "one PING per interval of silence: \(pings)")
        _ = try channel.finish()
        system.shutdown()
    }

    @Test("wake-ups fall on the 100 ms grid: never early, at most one step late, on the grid when already on it",
          arguments: [(0, 0.0), (1, 0.0), (1_234_567_890, 5.0), (99_999_999, 0.000_000_001), (5_000_000_000, 0.25), (7, 3600.0)] as [(UInt64, Double)])
    func gridDeadline(now: UInt64, delay: Double) {
        let start = NIODeadline.uptimeNanoseconds(now)
        let exact = (start + .seconds(clamping: delay)).uptimeNanoseconds
        let deadline = CastHeartbeatHandler.gridDeadline(now: start, delay: delay).uptimeNanoseconds
        #expect(deadline % CastHeartbeatHandler.wakeUpGrid == 0)
        #expect(deadline >= exact)
        #expect(deadline - exact < CastHeartbeatHandler.wakeUpGrid)
    }

    @Test("connections whose heartbeats fall due within one grid step wake up together")
    func sameStepSameWakeUp() {
        let a = CastHeartbeatHandler.gridDeadline(now: .uptimeNanoseconds(10_000_000_000), delay: 5.003)
        let b = CastHeartbeatHandler.gridDeadline(now: .uptimeNanoseconds(10_040_000_000), delay: 5.0)
        #expect(a == b)
    }
}
