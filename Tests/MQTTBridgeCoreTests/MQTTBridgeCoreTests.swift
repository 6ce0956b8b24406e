import CastJSON
import MQTTBridgeCore
import Testing

/// The MQTT bridge's pure parts, on clocks and random numbers the tests give.
@Suite struct StateCoalescerTests {
    @Test func theFirstChangeGoesAtOnceAndABurstBecomesOneFetchAtTheIntervalsEnd() {
        var c = StateCoalescer(interval: 0.1)
        #expect(c.changed("tv", now: 10.0) == .fetchNow)
        #expect(c.fetched("tv", now: 10.01) == .none)
        // A burst within 100 ms of the last fetch: one fetch, at 10.1.
        #expect(c.changed("tv", now: 10.02) == .fetchAt(10.1))
        #expect(c.changed("tv", now: 10.05) == .none)
        #expect(c.changed("tv", now: 10.09) == .none)
        #expect(c.due("tv", now: 10.1) == .fetchNow)
        // Another device is not held back by the first.
        #expect(c.changed("other", now: 10.1) == .fetchNow)
    }

    @Test func aChangeDuringAFetchIsFetchedAgainOnceItLanded() {
        var c = StateCoalescer(interval: 0.1)
        #expect(c.changed("tv", now: 0) == .fetchNow)
        #expect(c.changed("tv", now: 0.03) == .none)
        #expect(c.fetched("tv", now: 0.05) == .fetchAt(0.1))
        #expect(c.due("tv", now: 0.1) == .fetchNow)
        #expect(c.fetched("tv", now: 0.12) == .none)
        #expect(c.changed("tv", now: 0.5) == .fetchNow)
    }

    @Test func atMostOneFetchPerDevicePer100MillisecondsAndTheLastChangeIsFetched() {
        var c = StateCoalescer(interval: 0.1)
        var fetches: [Double] = []
        var pending: Double?, landing: Double?
        func handle(_ action: StateCoalescer.Action, at t: Double) {
            switch action {
            case .fetchNow: fetches.append(t); landing = t + 0.005
            case .fetchAt(let at): pending = at
            case .none: break
            }
        }
        // A change every 7 ms for 2 s; each fetch lands 5 ms after it started; a 1 ms clock.
        for ms in 0...2_300 {
            let t = Double(ms) / 1000
            if let at = landing, t >= at { landing = nil; handle(c.fetched("tv", now: t), at: t) }
            if let at = pending, t >= at { pending = nil; handle(c.due("tv", now: t), at: t) }
            if ms % 7 == 0, ms < 2_000 { handle(c.changed("tv", now: t), at: t) }
        }
        #expect((20...22).contains(fetches.count), "\(fetches.count)")
        for (a, b) in zip(fetches, fetches.dropFirst()) { #expect(b - a >= 0.1 - 1e-6, "\(a) → \(b)") }
        // The last change (at 1.995 s) is covered by a fetch after it.
        #expect((fetches.last ?? 0) >= 1.995)
    }
}

@Suite struct ReconnectBackoffTests {
    @Test func delaysDoubleToTheCapWithJitterInTheUpperHalfAndResetAfterAConnect() {
        var b = ReconnectBackoff(initial: 0.5, maximum: 30)
        #expect(b.next(unit: 0) == 0.25)
        #expect(b.next(unit: 0.999_999) > 0.99 && b.next(unit: 0) == 1.0)
        for _ in 0..<20 { _ = b.next(unit: 0.5) }
        #expect(b.next(unit: 1) == 30 && b.next(unit: 0) == 15)
        b.reset()
        #expect(b.next(unit: 1) == 0.5)
    }

    @Test func theDefaultsBringAnAgentBackWithinTwoSecondsOfTheBroker() {
        // Whatever the draw and however long the broker was away, no wait exceeds 1.5 s, and no
        // two agents wait alike (the lower bound is half the cap).
        var b = ReconnectBackoff()
        var delays: [Double] = []
        for i in 0..<200 { delays.append(b.next(unit: Double(i % 10) / 10)) }
        #expect(delays.max()! <= 1.5)
        #expect(delays.suffix(100).min()! >= 0.75)
        #expect(delays.first! < 0.25)
    }
}

@Suite struct ProblemLimiterTests {
    @Test func oncePerMinutePerSourceWithTheSuppressedCount() {
        var l = ProblemLimiter(interval: 60)
        #expect(l.shouldLog(source: "a", now: 0) == 0)
        #expect(l.shouldLog(source: "a", now: 1) == nil)
        #expect(l.shouldLog(source: "a", now: 59) == nil)
        #expect(l.shouldLog(source: "b", now: 59) == 0)
        #expect(l.shouldLog(source: "a", now: 60) == 2)
    }
}

@Suite struct CommandTranslatorTests {
    func plan(_ text: String, device: String = "tv 1") -> Result<CommandTranslator.Plan, CommandTranslator.Refusal> {
        let (_, object, refusal) = CommandTranslator.parse(Array(text.utf8), now: 1_000_000)
        if let refusal { return .failure(refusal) }
        return CommandTranslator.device(device, object!)
    }

    @Test func deviceCommandsBecomeTheAPIsRoutes() throws {
        #expect(try plan(#"{"id":"1","command":"cast","media":"http://x/a.mp4"}"#).get()
            == .request(["method": "POST", "path": "/v1/devices/tv%201/cast", "body": ["media": "http://x/a.mp4"]]))
        #expect(try plan(#"{"command":"volume","level":25}"#).get()
            == .request(["method": "POST", "path": "/v1/devices/tv%201/volume", "body": ["level": 25]]))
        #expect(try plan(#"{"command":"channel","namespace":"urn:x-cast:a.b","message":{"x":1}}"#).get()
            == .request(["method": "POST", "path": "/v1/devices/tv%201/channels/urn%3Ax-cast%3Aa.b", "body": ["message": ["x": 1]]]))
        #expect(try plan(#"{"command":"job","job":"lobby"}"#).get() == .assignJob(name: "lobby", device: "tv 1"))
        #expect(try plan(#"{"command":"job","job":"none"}"#).get() == .request(["method": "POST", "path": "/v1/devices/tv%201/stop", "body": [:]]))
    }

    @Test func badInputIsRefusedBeforeAnythingIsSent() {
        #expect(plan("{oops").failureCode == "bad_json")
        #expect(plan("[1]").failureCode == "not_an_object")
        #expect(plan(#"{"id":1}"#).failureCode == "missing_command")
        #expect(plan(#"{"command":"format-disk"}"#).failureCode == "unknown_command")
        #expect(plan(#"{"command":"channel","namespace":"x"}"#).failureCode == "missing_namespace")
        let big = #"{"command":"play","pad":""# + String(repeating: "x", count: 65_536) + #""}"#
        #expect(plan(big).failureCode == "payload_too_large")
        // The correlation id survives a refusal of the rest.
        #expect(CommandTranslator.parse(Array(#"{"id":"c7","command":"nope"}"#.utf8), now: 0).correlation == "c7")
        // A payload over the limit is refused by its size alone (it arrives empty, never copied).
        #expect(CommandTranslator.parse([], size: 150_000_000, now: 0).refusal?.code == "payload_too_large")
    }

    @Test func aCommandThatExpiredOrIsTooOldIsRefusedAndOneInTimeGoesThrough() throws {
        #expect(plan(#"{"command":"play","expires":999999}"#).failureCode == "expired")
        #expect(try plan(#"{"command":"play","expires":1000001}"#).get() == .request(["method": "POST", "path": "/v1/devices/tv%201/play", "body": [:]]),
                "expires and issued_at never reach the API")
        #expect(plan(#"{"command":"play","issued_at":999939}"#).failureCode == "expired")
        #expect(try plan(#"{"command":"play","issued_at":999941}"#).get() == .request(["method": "POST", "path": "/v1/devices/tv%201/play", "body": [:]]))
        #expect(plan(#"{"command":"play","issued_at":1000061}"#).failureCode == "bad_issued_at")
        #expect(plan(#"{"command":"play","expires":"soon"}"#).failureCode == "bad_expires")
    }

    @Test func jobCommandsAndResults() throws {
        #expect(try CommandTranslator.job("a b", ["op": "delete"]).get() == .request(["method": "DELETE", "path": "/v1/jobs/a%20b"]))
        #expect(try CommandTranslator.job("a", ["op": "PUT", "job": ["devices": ["x"]]]).get()
            == .request(["method": "PUT", "path": "/v1/jobs/a", "body": ["devices": ["x"]]]))
        #expect(CommandTranslator.job("a", ["op": "get"]).failureCode == "bad_op")
        #expect(CommandTranslator.result(correlation: "9", status: 404, body: ["error": ["code": "unknown_device"]])
            == ["id": "9", "ok": false, "status": 404, "error": ["code": "unknown_device"]])
        #expect(try CommandTranslator.assignment(of: "tv", toJob: "j", from: ["name": "j", "definition": ["devices": ["a"], "media": ["url": "u"]]]).get()
            == ["method": "PUT", "path": "/v1/jobs/j", "body": ["devices": ["tv"], "media": ["url": "u"]]])
    }
}

@Suite struct TopicAndDiscoveryTests {
    let scheme = TopicScheme(base: "castline", agent: "site1", discoveryPrefix: "homeassistant")

    @Test func setTopicsAreRecognisedAndNothingElse() {
        #expect(scheme.target(of: "castline/site1/device/tv/set") == .device("tv"))
        #expect(scheme.target(of: "castline/site1/job/lobby/set") == .job("lobby"))
        #expect(scheme.target(of: "castline/site2/device/tv/set") == nil)
        #expect(scheme.target(of: "castline/site1/device/tv/state") == nil)
        #expect(scheme.target(of: "castline/site1/device//set") == nil)
        #expect(TopicScheme.level("a/b+#c") == "a_b__c" && TopicScheme.discoveryID("tv.1 é") == "tv_1__")
    }
}

extension Result where Failure == CommandTranslator.Refusal {
    var failureCode: String? { if case .failure(let r) = self { r.code } else { nil } }
}
