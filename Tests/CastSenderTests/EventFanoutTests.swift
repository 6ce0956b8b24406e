import CastLogging
@testable import CastSender
import CastTestSupport
import Testing

@Suite("EventFanout")
struct EventFanoutTests {
    @Test("a subscriber that falls behind keeps the newest events, and its losses are warned at the 1st, 10th, 100th")
    func dropsAreReported() async throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let fanout = EventFanout<Int>("numbers", bufferLimit: 2, log: Logger(class: "Owner", system: system))
        let slow = fanout.stream()
        for n in 1...113 { fanout.emit(n) }
        fanout.finish()
        var kept: [Int] = []
        for await n in slow { kept.append(n) }
        #expect(kept == [112, 113])
        _ = system.flush()
        let warnings = sink.records.filter { $0.level == .warning }
        #expect(warnings.map(\.className) == ["Owner", "Owner", "Owner"])
        #expect(warnings.map { $0.fields["dropped"] } == [.int(1), .int(10), .int(100)])
        #expect(warnings.first?.message == "a subscriber to numbers fell 2 events behind: 1 oldest event(s) dropped so far")
    }

    @Test("a subscriber that keeps up loses nothing and nothing is warned; each subscriber is counted on its own")
    func keepingUpIsQuiet() async throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        let fanout = EventFanout<Int>("numbers", bufferLimit: 4, log: Logger(class: "Owner", system: system))
        let a = fanout.stream()
        for n in 1...4 { fanout.emit(n) }
        let b = fanout.stream()
        for n in 5...8 { fanout.emit(n) }
        fanout.finish()
        var fromA: [Int] = [], fromB: [Int] = []
        for await n in a { fromA.append(n) }
        for await n in b { fromB.append(n) }
        #expect(fromA == [5, 6, 7, 8])   // 4 lost
        #expect(fromB == [5, 6, 7, 8])   // none lost
        _ = system.flush()
        #expect(sink.records.filter { $0.level == .warning }.map { $0.fields["dropped"] } == [.int(1)])
    }

    @Test("the reported counts are the powers of ten")
    func reportedCounts() {
        #expect((1...1000).filter(EventFanout<Int>.isReported) == [1, 10, 100, 1000])
    }
}

@Suite struct OnScreenRecordTests {
    @Test func aServedFilesTokenNeverReachesTheRecord() {
        let token = String(repeating: "4b", count: 16)
        #expect(RemoteMediaClient.OnScreen.withoutToken("http://10.0.0.5:41289/\(token)/clip.mp4") == "http://10.0.0.5:41289/…/clip.mp4")
        #expect(RemoteMediaClient.OnScreen.withoutToken("https://cdn.example/live/stream.m3u8") == "https://cdn.example/live/stream.m3u8")
        #expect(RemoteMediaClient.OnScreen.withoutToken("http://a/\(token.dropLast())/x") == "http://a/\(token.dropLast())/x", "31 digits: not a token")
    }
}
