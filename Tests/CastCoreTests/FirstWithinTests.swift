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
}
