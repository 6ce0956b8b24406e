import Testing
@testable import CastCore

@Suite("Payload errors name the path")
struct PayloadErrorTests {
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let namespace: CastNamespace
        let text: String
        let expected: String
        var testDescription: String { expected }
    }

    static let cases: [ErrorCase] = [
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":"abc","playerState":"PLAYING"}]}"#,
              expected: #"status[0].mediaSessionId: expected an integer, found "abc""#),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"IDLE"},{"mediaSessionId":2}]}"#,
              expected: "status[1].playerState: missing required key"),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1.5,"playerState":"IDLE"}]}"#,
              expected: "status[0].mediaSessionId: expected an integer, found 1.5"),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":{}}"#,
              expected: "status: expected an array, found an object"),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"IDLE","currentTime":"12"}]}"#,
              expected: #"status[0].currentTime: expected a number, found "12""#),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":7}]}"#,
              expected: "status[0].playerState: expected a string, found 7"),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"IDLE","media":{"contentId":"c","metadata":{"images":[{"url":"a"},{"url":5}]}}}]}"#,
              expected: "status[0].media.metadata.images[1].url: expected a string, found 5"),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"IDLE","activeTrackIds":[1,"2"]}]}"#,
              expected: #"status[0].activeTrackIds[1]: expected an integer, found "2""#),
        .init(namespace: .media, text: #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"IDLE","volume":{"muted":"maybe"}}]}"#,
              expected: #"status[0].volume.muted: expected a boolean, found "maybe""#),
        .init(namespace: .media, text: #"{"type":"LOAD","requestId":1,"media":"x"}"#,
              expected: #"media: expected an object, found "x""#),
        .init(namespace: .media, text: #"{"type":"LOAD","requestId":1}"#, expected: "media: missing required key"),
        .init(namespace: .media, text: #"{"type":"LOAD","media":{"contentId":"x"}}"#, expected: "requestId: missing required key"),
        .init(namespace: .media, text: #"{"type":"LOAD","requestId":1,"media":{"contentType":"video/mp4"}}"#,
              expected: "media.contentId: missing required key"),
        .init(namespace: .media, text: #"{"type":"PLAY","requestId":"1"}"#, expected: #"requestId: expected an integer, found "1""#),
        .init(namespace: .media, text: #"{"type":"SEEK","requestId":1,"currentTime":3}"#, expected: "mediaSessionId: missing required key"),
        .init(namespace: .media, text: #"{"type":"SET_VOLUME","requestId":1,"mediaSessionId":1}"#, expected: "volume: missing required key"),
        .init(namespace: .media, text: #"{"type":"QUEUE_REMOVE","requestId":1,"mediaSessionId":1,"itemIds":[1,null]}"#,
              expected: "itemIds[1]: expected an integer, found null"),
        .init(namespace: .media, text: #"{"type":7}"#, expected: "type: expected a string, found 7"),
        .init(namespace: .media, text: #"[1,2]"#, expected: "$: expected an object, found an array"),
        .init(namespace: .receiver, text: #"{"type":"RECEIVER_STATUS","status":{"applications":[{"appId":"A","sessionId":"s"}]}}"#,
              expected: "status.applications[0].transportId: missing required key"),
        .init(namespace: .receiver, text: #"{"type":"RECEIVER_STATUS","status":{"applications":[{"appId":"A","sessionId":"s","transportId":"t","namespaces":[{"nom":"x"}]}]}}"#,
              expected: "status.applications[0].namespaces[0].name: missing required key"),
        .init(namespace: .receiver, text: #"{"type":"RECEIVER_STATUS","status":{"volume":{"level":"loud"}}}"#,
              expected: #"status.volume.level: expected a number, found "loud""#),
        .init(namespace: .receiver, text: #"{"responseType":"GET_APP_AVAILABILITY","availability":{"A":1}}"#,
              expected: "availability.A: expected a string, found 1"),
        .init(namespace: .receiver, text: #"{"type":"LAUNCH","requestId":1}"#, expected: "appId: missing required key"),
        .init(namespace: .receiver, text: #"{"type":"GET_APP_AVAILABILITY","requestId":1}"#, expected: "appId: missing required key"),
        .init(namespace: .connection, text: #"{"type":"CONNECT","connType":"strong"}"#,
              expected: #"connType: expected an integer, found "strong""#),
        .init(namespace: .connection, text: #"{"type":"CLOSE","reasonCode":true}"#,
              expected: "reasonCode: expected an integer, found true"),
    ]

    @Test("wrong types and missing required keys", arguments: cases)
    func payloadErrors(_ testCase: ErrorCase) {
        do {
            let payload = try CastPayload.decode(namespace: testCase.namespace, utf8: testCase.text)
            Issue.record("decoded as \(payload)")
        } catch {
            #expect(error.payloadError?.description == testCase.expected)
            #expect(error.jsonError == nil)
            #expect(error.description == "\(testCase.namespace): invalid payload at \(testCase.expected)")
        }
    }

    @Test func pathComponents() {
        let error = CastPayloadError(path: [.key("status"), .index(0), .key("mediaSessionId")], reason: "r")
        #expect(error.pathDescription == "status[0].mediaSessionId")
        #expect(error.prefixed(with: .key("outer")).pathDescription == "outer.status[0].mediaSessionId")
        #expect(CastPayloadError(reason: "r").description == "$: r")
        let long = String(repeating: "x", count: 100)
        #expect(CastPayloadError.typeMismatch(expected: "a number", found: .string(long)).reason
            == "expected a number, found \"\(String(repeating: "x", count: 40))\"…")
    }

    @Test func invalidJSONIsReportedWithNamespace() {
        do {
            _ = try CastPayload.decode(namespace: .media, utf8: #"{"type":"PLAY","requestId":1"#)
            Issue.record("no error")
        } catch {
            #expect(error.jsonError == JSONParseError(offset: 28, reason: "unexpected end of input"))
            #expect(error.payloadError == nil)
            #expect(error.description == "urn:x-cast:com.google.cast.media: invalid JSON at byte 28: unexpected end of input")
        }
    }

    @Test func customNamespacesOnlyNeedValidJSON() throws {
        #expect(try CastPayload.decode(namespace: .multizone, utf8: "[1]") == .custom([1]))
        #expect(throws: CastPayloadDecodingError.self) { try CastPayload.decode(namespace: .multizone, utf8: "[1") }
    }
}
