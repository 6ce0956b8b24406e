import CastCore
import Testing

@Suite("AsyncSequence.first(within:where:)")
struct FirstWithinTests {
    @Test("the first match; nil when the stream ends first; nil after the timeout when nothing comes")
    func firstWithin() async {
        let (numbers, feed) = AsyncStream.makeStream(of: Int.self)
        for n in [1, 3, 4, 6] { feed.yield(n) }
        #expect(await numbers.first(within: 5) { $0 % 2 == 0 } == 4)

        let (ended, finish) = AsyncStream.makeStream(of: Int.self)
        finish.yield(1)
        finish.finish()
        #expect(await ended.first(within: 60) { $0 > 1 } == nil)

        let (silent, keepOpen) = AsyncStream.makeStream(of: Int.self)
        #expect(await silent.first(within: 0.05) == nil)
        keepOpen.finish()
        #expect(await AsyncStream<Int> { $0.finish() }.first(within: .nan) == nil)
    }

    @Test("firstOutcome says which came first: a match, the stream's end, or the timeout")
    func outcome() async {
        let (numbers, feed) = AsyncStream.makeStream(of: Int.self)
        feed.yield(2)
        guard case .found(2) = await numbers.firstOutcome(within: 5) else { Issue.record("expected found(2)"); return }

        let (ended, finish) = AsyncStream.makeStream(of: Int.self)
        finish.finish()
        guard case .ended = await ended.firstOutcome(within: 60) else { Issue.record("expected ended"); return }

        let (silent, keepOpen) = AsyncStream.makeStream(of: Int.self)
        guard case .timedOut = await silent.firstOutcome(within: 0.05) else { Issue.record("expected timedOut"); return }
        keepOpen.finish()
    }
}
