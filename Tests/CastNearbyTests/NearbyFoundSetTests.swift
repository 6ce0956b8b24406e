@testable import CastNearby
import Testing

@Suite struct NearbyFoundSetTests {
    let a = NearbyMessage(type: "screen", text: "lobby: dashboard A")
    let b = NearbyMessage(type: "screen", text: "lobby: dashboard B")

    @Test func aMessageCarriedByTwoInstancesIsFoundOnceAndLostWithTheLast() {
        var set = NearbyFoundSet()
        #expect(set.appeared("eth0/IPv4/x", message: a, publisher: "h1.local") == [.found(a, publisher: "h1.local")])
        #expect(set.appeared("eth0/IPv6/x", message: a, publisher: "h1.local") == [])
        #expect(set.appeared("eth0/IPv4/y", message: a, publisher: "h2.local") == [])
        #expect(set.disappeared("eth0/IPv4/x") == [])
        #expect(set.disappeared("eth0/IPv6/x") == [])
        #expect(set.disappeared("eth0/IPv4/y") == [.lost(a, publisher: "h2.local")])
        #expect(set.disappeared("eth0/IPv4/y") == [], "an unknown instance changes nothing")
    }

    @Test func anInstanceWhoseContentChangesLosesTheOldMessageAndFindsTheNew() {
        var set = NearbyFoundSet()
        _ = set.appeared("i", message: a, publisher: "h")
        #expect(set.appeared("i", message: b, publisher: "h") == [.lost(a, publisher: "h"), .found(b, publisher: "h")])
        #expect(set.messages.map(\.0) == [b])
    }

    @Test func removeAllLosesEachDistinctMessageOnce() {
        var set = NearbyFoundSet()
        _ = set.appeared("1", message: a, publisher: "h")
        _ = set.appeared("2", message: a, publisher: "h")
        _ = set.appeared("3", message: b, publisher: "h")
        let changes = set.removeAll()
        #expect(changes.count == 2)
        #expect(set.instanceCount == 0)
        #expect(set.appeared("1", message: a, publisher: "h") == [.found(a, publisher: "h")])
    }

    @Test func filtersMatchNamespaceAndTypes() {
        let filter = NearbyMessageFilter(namespace: "castline", types: ["screen"])
        #expect(filter.matches(a))
        #expect(!filter.matches(NearbyMessage(type: "other", text: "x")))
        #expect(!filter.matches(NearbyMessage(namespace: "elsewhere", type: "screen", text: "x")))
        #expect(NearbyMessageFilter.everything.matches(NearbyMessage(namespace: "elsewhere", type: "q", text: "x")))
        #expect(NearbyMessageFilter().matches(NearbyMessage(type: "anything", text: "x")))
    }
}
