import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

@Suite("Receiver simulator: queues")
struct MediaQueueTests {
    static func item(_ name: String, duration: Double = 10) -> JSONValue {
        ["media": [
            "contentId": .string("http://example.com/\(name).mp3"), "contentType": "audio/mpeg", "streamType": "BUFFERED",
            "duration": .double(duration), "metadata": ["metadataType": 3, "title": .string(name)],
        ], "autoplay": true]
    }

    /// The one status in the requester's reply.
    static func reply(_ outputs: [DeviceOutput]) throws -> MediaStatus {
        let statuses = SimHarness.mediaStatuses(outputs).filter { ($0.requestID?.rawValue ?? 0) != 0 }
        try #require(statuses.count == 1, "\(SimHarness.sent(outputs).map(\.json))")
        return try #require(statuses[0].status.first)
    }

    static func titles(_ status: MediaStatus) -> [String] {
        (status.items ?? []).map { $0.media?.metadata?.title ?? "?" }
    }

    @Test func queueOperations() throws {
        var sim = SimHarness()
        sim.launchDMR()
        let loaded = try Self.reply(sim.media("QUEUE_LOAD", ["items": [Self.item("a"), Self.item("b"), Self.item("c")], "startIndex": 0]))
        #expect(loaded.items?.map(\.itemID) == [1, 2, 3] && loaded.currentItemID == 1 && loaded.repeatMode == .off)
        #expect(loaded.supportedMediaCommands.isSuperset(of: [.queueNext, .queuePrev, .allBasicMedia, .streamTransfer]))
        #expect(loaded.media?.metadata?.title == "a")

        let appended = try Self.reply(sim.media("QUEUE_INSERT", ["mediaSessionId": 1, "items": [Self.item("d")]]))
        #expect(Self.titles(appended) == ["a", "b", "c", "d"] && appended.items?.last?.itemID == 4)

        let jumped = try Self.reply(sim.media("QUEUE_INSERT", [
            "mediaSessionId": 1, "items": [Self.item("e")], "insertBefore": 2, "currentItemIndex": 0,
        ]))
        #expect(Self.titles(jumped) == ["a", "e", "b", "c", "d"])
        #expect(jumped.currentItemID == 5 && jumped.playerState == .buffering && jumped.media?.metadata?.title == "e")

        let removed = try Self.reply(sim.media("QUEUE_REMOVE", ["mediaSessionId": 1, "itemIds": [3]]))
        #expect(Self.titles(removed) == ["a", "e", "b", "d"] && removed.currentItemID == 5)

        let reordered = try Self.reply(sim.media("QUEUE_REORDER", ["mediaSessionId": 1, "itemIds": [4], "insertBefore": 1]))
        #expect(Self.titles(reordered) == ["d", "a", "e", "b"] && reordered.currentItemID == 5)

        let next = try Self.reply(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "jump": 1]))
        #expect(next.currentItemID == 2 && next.media?.metadata?.title == "b")

        let beyond = SimHarness.sent(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "jump": 1]))
        #expect(beyond.map(\.json) == [["type": "INVALID_REQUEST", "requestId": 8, "reason": "END_OF_QUEUE"]])

        let first = try Self.reply(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "currentItemId": 4]))
        #expect(first.currentItemID == 4 && first.playerState == .buffering)

        // Item d plays to its end; a follows on its own.
        sim.advance(by: 0.25)
        let following = SimHarness.mediaStatuses(sim.advance(by: 10))
        #expect(following.count == 1 && following.first?.requestID == 0)
        #expect(following.first?.status.first?.currentItemID == 1 && following.first?.status.first?.playerState == .buffering)
        #expect(following.first?.status.first?.mediaSessionID == 1)

        // REPEAT_ALL wraps from the last item to the first.
        let last = try Self.reply(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "currentItemId": 2, "repeatMode": "REPEAT_ALL"]))
        #expect(last.repeatMode == .all && last.currentItemID == 2)
        sim.advance(by: 0.25)
        let wrapped = SimHarness.mediaStatuses(sim.advance(by: 10))
        #expect(wrapped.first?.status.first?.currentItemID == 4)

        // REPEAT_OFF on the last item: the queue finishes.
        _ = try Self.reply(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "currentItemId": 2, "repeatMode": "REPEAT_OFF"]))
        sim.advance(by: 0.25)
        let done = SimHarness.mediaStatuses(sim.advance(by: 10))
        #expect(done.first?.status.first?.playerState == .idle && done.first?.status.first?.idleReason == .finished)
        #expect(sim.mediaStatus() == nil)
    }

    @Test func repeatSingleReplaysTheItem() {
        var sim = SimHarness()
        sim.launchDMR()
        sim.media("QUEUE_LOAD", ["items": [Self.item("a", duration: 5), Self.item("b")], "repeatMode": "REPEAT_SINGLE"])
        sim.advance(by: 0.25)
        let again = SimHarness.mediaStatuses(sim.advance(by: 5))
        #expect(again.first?.status.first?.currentItemID == 1 && again.first?.status.first?.currentTime == 0)
    }

    @Test func startIndexAndCurrentTime() throws {
        var sim = SimHarness()
        sim.launchDMR()
        let status = try Self.reply(sim.media("QUEUE_LOAD", [
            "items": [Self.item("a"), Self.item("b")], "startIndex": 1, "currentTime": 4,
        ]))
        #expect(status.currentItemID == 2 && status.currentTime == 4)
    }

    @Test func removingTheCurrentItem() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.media("QUEUE_LOAD", ["items": [Self.item("a"), Self.item("b"), Self.item("c")]])
        let moved = try Self.reply(sim.media("QUEUE_REMOVE", ["mediaSessionId": 1, "itemIds": [1, 2]]))
        #expect(moved.currentItemID == 3 && Self.titles(moved) == ["c"])
        let emptied = try Self.reply(sim.media("QUEUE_REMOVE", ["mediaSessionId": 1, "itemIds": [3]]))
        #expect(emptied.playerState == .idle && emptied.idleReason == .cancelled)
        #expect(sim.mediaStatus() == nil)
    }

    @Test func nextPrevAndItemIDs() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.media("QUEUE_LOAD", ["items": [Self.item("a"), Self.item("b")]])
        #expect(try Self.reply(sim.media("QUEUE_NEXT", ["mediaSessionId": 1])).currentItemID == 2)
        #expect(try Self.reply(sim.media("QUEUE_PREV", ["mediaSessionId": 1])).currentItemID == 1)
        let ids = SimHarness.sent(sim.media("QUEUE_GET_ITEM_IDS", ["mediaSessionId": 1]))
        #expect(ids.map(\.json) == [["type": "QUEUE_ITEM_IDS", "requestId": 5, "itemIds": [1, 2]]])
        let items = SimHarness.sent(sim.media("QUEUE_GET_ITEMS", ["mediaSessionId": 1, "itemIds": [2]]))
        #expect(items.first?.json["items"]?.array?.count == 1 && items.first?.json["items"]?[0]?["itemId"] == 2)
    }

    @Test func shuffleIsDeterministicAndKeepsTheItems() throws {
        func shuffled(seed: UInt64) throws -> [Int] {
            var sim = SimHarness(seed: seed)
            sim.launchDMR()
            sim.media("QUEUE_LOAD", ["items": .array((0..<8).map { Self.item("t\($0)") })])
            let status = try Self.reply(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "shuffle": true]))
            #expect(status.currentItemID == 1)
            return (status.items ?? []).compactMap(\.itemID)
        }
        let first = try shuffled(seed: 3)
        #expect(first == (try shuffled(seed: 3)))
        #expect(first.sorted() == Array(1...8) && first != Array(1...8))
    }

    @Test func invalidQueueRequestsChangeNothing() throws {
        var sim = SimHarness()
        sim.launchDMR()
        func reason(_ outputs: [DeviceOutput]) -> String? { SimHarness.sent(outputs).first?.json["reason"]?.string }
        #expect(reason(sim.media("QUEUE_LOAD", ["items": []])) == "INVALID_PARAMS")
        #expect(reason(sim.media("QUEUE_LOAD", ["items": [Self.item("a")], "startIndex": 3])) == "INVALID_PARAMS")
        #expect(SimHarness.sent(sim.media("QUEUE_INSERT", ["mediaSessionId": 1, "items": [Self.item("x")]])).first?.type
            == "INVALID_PLAYER_STATE")
        sim.media("QUEUE_LOAD", ["items": [Self.item("a"), Self.item("b")]])
        #expect(reason(sim.media("QUEUE_INSERT", ["mediaSessionId": 1, "items": [Self.item("x")], "insertBefore": 77])) == "INVALID_PARAMS")
        #expect(reason(sim.media("QUEUE_REORDER", ["mediaSessionId": 1, "itemIds": [1, 99]])) == "INVALID_PARAMS")
        #expect(reason(sim.media("QUEUE_REORDER", ["mediaSessionId": 1, "itemIds": [1], "insertBefore": 1])) == "INVALID_PARAMS")
        #expect(reason(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "currentItemId": 42, "repeatMode": "REPEAT_ALL"])) == "INVALID_PARAMS")
        #expect(reason(sim.media("QUEUE_UPDATE", ["mediaSessionId": 1, "jump": .int(Int64.max)])) == "END_OF_QUEUE")
        #expect(reason(sim.media("QUEUE_REMOVE", ["mediaSessionId": 2, "itemIds": [1]])) == "INVALID_MEDIA_SESSION_ID")
        let current = sim.mediaStatus()
        let status = try #require(current)
        #expect(Self.titles(status) == ["a", "b"] && status.repeatMode == .off && status.currentItemID == 1)
    }
}
