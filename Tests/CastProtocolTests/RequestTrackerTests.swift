import CastCore
import CastProtocol
import Testing

@Suite("Request tracker")
struct RequestTrackerTests {
    static func payload(_ namespace: CastNamespace, _ json: JSONValue) throws -> CastPayload {
        try CastPayload.decode(namespace: namespace, json: json)
    }

    @Test("ids grow from 1; a reply completes its request once; unsolicited and unknown ids match nothing")
    func matching() throws {
        var tracker = RequestTracker<String>()
        let (a, _) = tracker.begin(namespace: .receiver, type: "GET_STATUS", timeout: 10, now: 0, waiter: "a")
        let (b, _) = tracker.begin(namespace: .media, type: "GET_STATUS", timeout: 10, now: 0, waiter: "b")
        #expect(a == 1 && b == 2)
        let status = try Self.payload(.media, ["type": "MEDIA_STATUS", "requestId": 2, "status": []])
        let wrongNamespace = tracker.reply(status, on: .receiver)
        #expect(wrongNamespace == nil, "same id on another namespace is not the reply")
        let reply = tracker.reply(status, on: .media)
        let done = try #require(reply)
        #expect(done.request.waiter == "b")
        guard case .success(.media(.mediaStatus)) = done.result else { Issue.record("\(done.result)"); return }
        let late = tracker.reply(status, on: .media)
        #expect(late == nil, "a second reply to the same id is late, not a completion")
        let unsolicited = try Self.payload(.media, ["type": "MEDIA_STATUS", "requestId": 0, "status": []])
        let none = tracker.reply(unsolicited, on: .media)
        #expect(none == nil)
        #expect(tracker.waiting.map(\.id) == [a])
    }

    @Test("device rejections become typed failures with the device's reason and named code")
    func rejections() throws {
        var tracker = RequestTracker<Int>()
        let cases: [(CastNamespace, JSONValue, CastRequestError)] = [
            (.media, ["type": "LOAD_FAILED", "detailedErrorCode": 104], .loadFailed(DetailedErrorCode(rawValue: 104))),
            (.media, ["type": "LOAD_CANCELLED"], .loadCancelled),
            (.media, ["type": "INVALID_PLAYER_STATE"], .invalidPlayerState),
            (.media, ["type": "INVALID_REQUEST", "reason": "INVALID_MEDIA_SESSION_ID"], .invalidRequest(.invalidMediaSessionID)),
            (.receiver, ["type": "LAUNCH_ERROR", "reason": "NOT_FOUND"], .launchError(.notFound)),
            (.receiver, ["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"], .invalidRequest(.invalidCommand)),
            (.media, ["type": "ERROR", "detailedErrorCode": 104, "reason": "GENERIC"],
             .deviceError(DetailedErrorCode(rawValue: 104), ErrorReason(rawValue: "GENERIC"))),
        ]
        for (index, (namespace, json, expected)) in cases.enumerated() {
            let (id, _) = tracker.begin(namespace: namespace, type: "X", timeout: 10, now: 0, waiter: index)
            var object = json.object!
            object.set("requestId", .int(Int64(id.rawValue)))
            let reply = tracker.reply(try Self.payload(namespace, .object(object)), on: namespace)
            let done = try #require(reply)
            #expect(done.request.waiter == index)
            guard case .failure(let error) = done.result else { Issue.record("\(json.serialized()) succeeded"); continue }
            #expect(error == expected)
        }
        #expect(CastRequestError.loadFailed(DetailedErrorCode(rawValue: 104)).description.contains("104"))
    }

    @Test("LOAD_FAILED reads as what went wrong on the device: code name, number and meaning; an unknown code as its number")
    func loadFailedReads() {
        #expect(CastRequestError.loadFailed(.mediaSrcNotSupported).description
                == "LOAD_FAILED: MEDIA_SRC_NOT_SUPPORTED (104): the device could not load the media: it is unreachable from the device, "
                + "answers with an HTTP error, or is not in a format the device plays")
        #expect(CastRequestError.loadFailed(.hlsNetworkMasterPlaylist).description.hasPrefix("LOAD_FAILED: HLS_NETWORK_MASTER_PLAYLIST (311): the device could not fetch the HLS playlist"))
        #expect(CastRequestError.loadFailed(DetailedErrorCode(rawValue: 999)).description == "LOAD_FAILED: code (999)")
        for (value, name) in DetailedErrorCode.knownNames {
            #expect(DetailedErrorCode(rawValue: value).explanation != nil, "\(name) has no explanation")
        }
    }

    @Test("deadlines: expire returns what is due, oldest first, with the timeout it had")
    func timeouts() {
        var tracker = RequestTracker<String>()
        _ = tracker.begin(namespace: .media, type: "LOAD", timeout: 10, now: 100, waiter: "load")
        _ = tracker.begin(namespace: .media, type: "PLAY", timeout: 2, now: 101, waiter: "play")
        #expect(tracker.nextDeadline == 103)
        let early = tracker.expire(now: 102.9)
        #expect(early.isEmpty)
        let due = tracker.expire(now: 110)
        #expect(due.map(\.request.waiter) == ["load", "play"])
        guard case .failure(.timedOut(let after)) = due[1].result else { Issue.record("\(due[1].result)"); return }
        #expect(after == 2)
        #expect(tracker.nextDeadline == nil)
        // No timeout: never due.
        _ = tracker.begin(namespace: .media, type: "GET_STATUS", timeout: .infinity, now: 0, waiter: "forever")
        let never = tracker.expire(now: 1e12)
        #expect(never.isEmpty)
    }

    @Test("a second LOAD supersedes the first; other types do not")
    func supersede() {
        var tracker = RequestTracker<String>()
        let (first, _) = tracker.begin(namespace: .media, type: "LOAD", timeout: 10, now: 0, waiter: "first", supersedes: true)
        _ = tracker.begin(namespace: .media, type: "PLAY", timeout: 10, now: 0, waiter: "play")
        let (second, replaced) = tracker.begin(namespace: .media, type: "LOAD", timeout: 10, now: 1, waiter: "second", supersedes: true)
        #expect(replaced.map(\.request.id) == [first])
        guard case .failure(.superseded(let by)) = replaced.first?.result else { Issue.record("not superseded"); return }
        #expect(by == second)
        #expect(tracker.waiting.map(\.waiter) == ["play", "second"])
    }

    @Test("disconnect fails everything pending, cancel one; ids wrap and skip 0 and ids in use")
    func disconnectCancelWrap() {
        var tracker = RequestTracker<Int>(firstID: Int(Int32.max))
        let (last, _) = tracker.begin(namespace: .receiver, type: "A", timeout: 5, now: 0, waiter: 1)
        let (wrapped, _) = tracker.begin(namespace: .receiver, type: "B", timeout: 5, now: 0, waiter: 2)
        #expect(last.rawValue == Int(Int32.max) && wrapped == 1)
        let (third, _) = tracker.begin(namespace: .receiver, type: "C", timeout: 5, now: 0, waiter: 3)
        let cancelled = tracker.cancel(third)
        guard case .failure(.cancelled)? = cancelled?.result else { Issue.record("not cancelled"); return }
        let again = tracker.cancel(third)
        #expect(again == nil)
        let gone = tracker.disconnect("device closed the connection")
        #expect(gone.map(\.request.waiter) == [1, 2])   // oldest first, though its id is the larger
        #expect(gone.allSatisfy { if case .failure(.disconnected) = $0.result { true } else { false } })
        #expect(tracker.waiting.isEmpty)
    }

    @Test("failing a destination ends only the requests sent there, oldest first")
    func failByDestination() {
        var tracker = RequestTracker<String>()
        _ = tracker.begin(namespace: .media, type: "LOAD", timeout: 30, now: 0, waiter: "load", destination: "app-1")
        _ = tracker.begin(namespace: .receiver, type: "GET_STATUS", timeout: 30, now: 1, waiter: "status", destination: "receiver-0")
        _ = tracker.begin(namespace: .media, type: "GET_STATUS", timeout: 30, now: 2, waiter: "media", destination: "app-1")
        let failed = tracker.fail(destination: "app-1", with: .disconnected("app stopped"))
        #expect(failed.map(\.request.waiter) == ["load", "media"])
        #expect(failed.allSatisfy { if case .failure(.disconnected("app stopped")) = $0.result { true } else { false } })
        #expect(tracker.waiting.map(\.waiter) == ["status"], "the platform's request stays")
        #expect(tracker.fail(destination: "app-1", with: .cancelled).isEmpty)
    }
}
