import CastCore
import CastProtocol
@testable import CastReceiverSim
import Testing

/// The replay lookup: which recorded messages answer a request, with what delay and ids.
@Suite("ReplayScript")
struct ReplayScriptTests {
    static let receiver = "urn:x-cast:com.google.cast.receiver"
    static let media = "urn:x-cast:com.google.cast.media"

    static func frame(_ offset: Double, _ direction: String, _ namespace: String, _ payload: String,
                      _ source: String = "receiver-0", _ destination: String = "sender-0") -> String {
        let json = try! JSONValue.parse(payload)
        var object: JSONObject = ["event": "frame", "offset": .double(offset), "direction": .string(direction),
                                  "source": .string(source), "destination": .string(destination), "namespace": .string(namespace),
                                  "payload": json]
        if let type = json["type"]?.string { object.set("type", .string(type)) }
        if let id = json["requestId"]?.int { object.set("requestId", .int(id)) }
        return JSONValue.object(object).serialized()
    }

    /// A follower asks for the receiver status, an app appears (unsolicited), it asks that app's
    /// media status, then the media plays and pauses (unsolicited); a LOAD it sent itself.
    static let capture = [
        #"{"event":"capture","version":1,"device":{"id":"0123456789abcdef0123456789abcdef","name":"Den TV","model":"Chromecast"},"txt":{"id":"0123456789abcdef0123456789abcdef","fn":"Den TV","ca":"4101"},"eurekaInfo":{"name":"Den TV","uptime":12.5}}"#,
        frame(0.0, "out", receiver, #"{"type":"GET_STATUS","requestId":1}"#, "sender-0", "receiver-0"),
        frame(0.01, "in", receiver, #"{"type":"RECEIVER_STATUS","requestId":1,"status":{"applications":[]}}"#),
        frame(0.5, "in", receiver, #"{"type":"RECEIVER_STATUS","requestId":0,"status":{"applications":[{"appId":"CC1AD845"}]}}"#),
        frame(0.6, "out", media, #"{"type":"GET_STATUS","requestId":2}"#, "sender-0", "app-1"),
        frame(0.62, "in", media, #"{"type":"MEDIA_STATUS","requestId":2,"status":[]}"#, "app-1"),
        frame(1.6, "in", media, #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"playerState":"PLAYING"}]}"#, "app-1"),
        frame(2.6, "in", media, #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"playerState":"PAUSED"}]}"#, "app-1"),
        frame(3.0, "out", media, #"{"type":"LOAD","requestId":3,"sessionId":"s1","media":{"contentId":"a.mp4"}}"#, "sender-0", "app-1"),
        frame(3.2, "in", media, #"{"type":"MEDIA_STATUS","requestId":3,"status":[{"playerState":"BUFFERING"}]}"#, "app-1"),
        #"{"event":"end","offset":4.0}"#,
    ].joined(separator: "\n")

    static func request(_ namespace: String, _ payload: String, destination: String = "receiver-0") -> CastMessage {
        CastMessage(source: "client-7", destination: destination, namespace: CastNamespace(rawValue: namespace),
                    json: try! JSONValue.parse(payload))
    }

    static func states(_ outputs: [ReplayOutput]) -> [String?] {
        outputs.map { output in
            let json = try! JSONValue.parse(output.message.payload.text!)
            return json["status"]?.array?.first?["playerState"]?.string ?? json["type"]?.string
        }
    }

    @Test("the capture line gives the identity: name, id, model, TXT, eureka_info")
    func identity() throws {
        let script = try ReplayScript(captureText: Self.capture)
        #expect(script.identity.name == "Den TV" && script.identity.id == "0123456789abcdef0123456789abcdef")
        #expect(script.identity.model == "Chromecast" && script.identity.txt["ca"] == "4101")
        #expect(script.identity.eurekaInfo?["uptime"]?.double == 12.5)
        #expect(script.recordedRequestCount == 3)
    }

    @Test("the TXT keys keep the capture's order; txtComplete marks the device's whole record")
    func txtOrderAndCompleteness() throws {
        #expect(try ReplayScript(captureText: Self.capture).identity.txtComplete == false)
        let complete = try ReplayScript(captureText:
            #"{"event":"capture","version":1,"txtComplete":true,"txt":{"id":"0123456789abcdef0123456789abcdef","ve":"02","md":"Chromecast","st":"0"}}"#)
        #expect(complete.identity.txtComplete)
        #expect(complete.identity.txtOrder == ["id", "ve", "md", "st"])
        #expect(complete.identity.txt["ve"] == "02")
    }

    @Test("a recorded request gets its answer (requestId rewritten, addressed back) then the unsolicited statuses at their delays")
    func answerThenUnsolicited() throws {
        let script = try ReplayScript(captureText: Self.capture)
        var cursor = ReplayCursor()
        let outputs = try #require(script.replies(to: Self.request(Self.media, #"{"type":"GET_STATUS","requestId":77}"#, destination: "app-1"),
                                                  now: 100, cursor: &cursor))
        #expect(Self.states(outputs) == ["MEDIA_STATUS", "PLAYING", "PAUSED"])
        #expect(outputs.map(\.delay).map { ($0 * 100).rounded() / 100 } == [0.02, 1.0, 2.0])
        #expect(outputs.map(\.isAnswer) == [true, false, false])
        let answer = try JSONValue.parse(outputs[0].message.payload.text!)
        #expect(answer["requestId"]?.int == 77)
        #expect(outputs.allSatisfy { $0.message.destinationID == "client-7" })
        #expect(outputs[1].message.sourceID == "app-1")
    }

    @Test("a repeated status query gets the newest status already replayed by now, not the first answer again")
    func repeatedQueryGetsTheCurrentStatus() throws {
        let script = try ReplayScript(captureText: Self.capture)
        var cursor = ReplayCursor()
        let ask = Self.request(Self.media, #"{"type":"GET_STATUS","requestId":5}"#, destination: "app-1")
        _ = script.replies(to: ask, now: 100, cursor: &cursor)
        #expect(Self.states(try #require(script.replies(to: ask, now: 101.5, cursor: &cursor))) == ["PLAYING"])
        let late = try #require(script.replies(to: ask, now: 110, cursor: &cursor))
        #expect(Self.states(late) == ["PAUSED"] && late[0].delay == 0 && late[0].isAnswer)
        // Another connection starts from the beginning.
        var other = ReplayCursor()
        #expect(Self.states(try #require(script.replies(to: ask, now: 110, cursor: &other))) == ["MEDIA_STATUS", "PLAYING", "PAUSED"])
    }

    @Test("a LOAD matches only with the recorded body (ids aside); anything else is unrecorded")
    func bodyMatters() throws {
        let script = try ReplayScript(captureText: Self.capture)
        var cursor = ReplayCursor()
        let same = Self.request(Self.media, #"{"type":"LOAD","requestId":9,"sessionId":"other","media":{"contentId":"a.mp4"}}"#)
        #expect(Self.states(try #require(script.replies(to: same, now: 0, cursor: &cursor))) == ["BUFFERING"])
        let other = Self.request(Self.media, #"{"type":"LOAD","requestId":9,"media":{"contentId":"b.mp4"}}"#)
        #expect(script.replies(to: other, now: 0, cursor: &cursor) == nil)
        #expect(script.replies(to: Self.request(Self.receiver, #"{"type":"SET_VOLUME","requestId":4,"volume":{"level":0.5}}"#),
                               now: 0, cursor: &cursor) == nil)
        // The connection namespace is always the model's.
        #expect(script.replies(to: Self.request("urn:x-cast:com.google.cast.tp.connection", #"{"type":"CONNECT"}"#),
                               now: 0, cursor: &cursor) == nil)
    }

    @Test("a file that is not a capture is refused with the reason", arguments: [
        ("", "no \"capture\" line"), ("{\"event\":\"frame\"}", "no \"capture\" line"), ("{\"event\":\"capture\"}\nnot json", "line 2"),
    ])
    func refusesNonCaptures(text: String, reason: String) {
        #expect(throws: ReplayScriptError.self) { try ReplayScript(captureText: text) }
        do { _ = try ReplayScript(captureText: text) } catch { #expect(error.description.contains(reason)) }
    }
}

@Suite("ReplayScript drops")
struct ReplayScriptDropTests {
    static let receiver = "urn:x-cast:com.google.cast.receiver"

    @Test("a recorded drop closes the replayed connection at its delay; the capture's own end does not")
    func drops() throws {
        let f = ReplayScriptTests.frame
        let text = [
            #"{"event":"capture","device":{"id":"x","name":"TV"}}"#,
            f(0, "out", Self.receiver, #"{"type":"GET_STATUS","requestId":1}"#, "sender-0", "receiver-0"),
            f(0.01, "in", Self.receiver, #"{"type":"RECEIVER_STATUS","requestId":1,"status":{}}"#, "receiver-0", "sender-0"),
            #"{"event":"closed","offset":2.0}"#,
            f(3, "out", Self.receiver, #"{"type":"GET_STATUS","requestId":2}"#, "sender-0", "receiver-0"),
            f(3.01, "in", Self.receiver, #"{"type":"RECEIVER_STATUS","requestId":2,"status":{"x":1}}"#, "receiver-0", "sender-0"),
            f(4, "out", "urn:x-cast:com.google.cast.tp.connection", #"{"type":"CLOSE"}"#, "sender-0", "receiver-0"),
            #"{"event":"closed","offset":4.1}"#,
        ].joined(separator: "\n")
        let script = try ReplayScript(captureText: text)
        var cursor = ReplayCursor()
        let ask = ReplayScriptTests.request(Self.receiver, #"{"type":"GET_STATUS","requestId":9}"#)
        let first = try #require(script.replies(to: ask, now: 0, cursor: &cursor))
        #expect(first.map(\.closesConnection) == [false, true] && first[1].delay == 2.0)
        let second = try #require(script.replies(to: ask, now: 5, cursor: &cursor))
        #expect(second.map(\.closesConnection) == [false])
    }
}
