import Testing
@testable import CastCore

/// `CastPayload.decode(namespace:utf8:)` decodes media payloads straight from the parser's tape;
/// it must agree exactly (values and errors) with parsing to a `JSONValue` first.
@Suite("Tape decoding agrees with tree decoding")
struct TapeDecodingTests {
    static let payloads: [String] = [
        #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":1,"playerState":"PLAYING","currentTime":12.5,"playbackRate":1,"supportedMediaCommands":12303,"volume":{"level":1,"muted":false},"media":{"contentId":"http://192.168.1.5/a.mp4","streamType":"BUFFERED","contentType":"video/mp4"}}]}"#,
        #"{"type":"MEDIA_STATUS","status":[]}"#,
        #"{"type":"MEDIA_STATUS"}"#,
        #"{"type":"MEDIA_STATUS","status":null,"requestId":null}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":2.0,"playerState":"IDLE","idleReason":"FINISHED","currentTime":null,"volume":null,"media":null}]}"#,
        // Escaped keys and values, non-ASCII, duplicates (first lookup wins, last member wins).
        #"{"t\u0079pe":"MEDIA_\u0053TATUS","status":[{"media\u0053essionId":3,"playerState":"P\u00c4USED","media":{"contentId":"\u00e9\ud83d\ude00","x\u00e9":[1,{"a":null}],"contentType":"a","contentType":"b"}}],"type":"LOAD"}"#,
        // Kelvin sign (U+212A) is canonically equivalent to "K": String equality decides.
        "{\"type\":\"MEDIA_STATUS\",\"status\":[{\"mediaSessionId\":1,\"playerState\":\"\u{212A}\",\"customData\":{\"\u{212A}\":1}}]}",
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"PLAYING","volume":{"level":"loud"}}]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"playerState":"PLAYING"}]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1.5,"playerState":"PLAYING"}]}"#,
        #"{"type":"MEDIA_STATUS","status":{"mediaSessionId":1}}"#,
        #"{"type":"MEDIA_STATUS","status":[1]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"PLAYING","media":{"streamType":"LIVE"}}]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"PLAYING","activeTrackIds":[1,2,"3"]}]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"PLAYING","volume":{"muted":"true"},"items":[{"itemId":1,"media":{"contentId":"a"}}],"extendedStatus":{"playerState":"LOADING"},"videoInfo":{"width":1,"height":2}}]}"#,
        // A key one byte off a known one (same length) is an unknown key: "mediaSessionId" is missing.
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionID":1,"playerState":"PLAYING"}]}"#,
        #"{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playerState":"PLAYING","volume":{"levell":0.5,"mute":true}}]}"#,
        // More tape entries than the parser keeps on the stack (the tape moves to the heap mid-document).
        #"{"type":"MEDIA_STATUS","requestId":3,"status":[{"mediaSessionId":1,"playerState":"PLAYING","activeTrackIds":["#
            + (1...90).map(String.init).joined(separator: ",")
            + #"],"media":{"contentId":"a","tracks":[{"trackId":1,"type":"TEXT"}],"extra":[{"a":1},{"b":[2,3]}]}}]}"#,
        #"{"type":"PLAY","requestId":4,"mediaSessionId":1}"#,
        #"{"type":"PLAY","mediaSessionId":1}"#,
        #"{"type":"ERROR","requestId":5,"reason":"INVALID_REQUEST"}"#,
        #"{"type":"SOMETHING_NEW","x":[1,2,{"y":true}]}"#,
        #"{"type":7}"#,
        #"[1,2]"#,
        #""MEDIA_STATUS""#,
        #"{"type":"LOAD","requestId":1,"media":{"contentId":"a","contentType":"video/mp4"},"autoplay":"false"}"#,
        // JSON errors.
        #"{"type":"MEDIA_STATUS","status":[}"#,
        #"{"type":"MEDIA_STATUS""#,
        "",
    ]

    static func viaTree(_ namespace: CastNamespace, _ text: String) -> Result<CastPayload, CastPayloadDecodingError> {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValue.parse(text)
        } catch {
            return .failure(CastPayloadDecodingError(namespace: namespace, failure: .json(error)))
        }
        do throws(CastPayloadDecodingError) {
            return .success(try CastPayload.decode(namespace: namespace, json: value))
        } catch {
            return .failure(error)
        }
    }

    static func viaText(_ namespace: CastNamespace, _ text: String) -> Result<CastPayload, CastPayloadDecodingError> {
        do throws(CastPayloadDecodingError) {
            return .success(try CastPayload.decode(namespace: namespace, utf8: text))
        } catch {
            return .failure(error)
        }
    }

    static func viaBytes(_ namespace: CastNamespace, _ text: String) -> Result<CastPayload, CastPayloadDecodingError> {
        Array(text.utf8).withUnsafeBytes { bytes in
            do throws(CastPayloadDecodingError) {
                return .success(try CastPayload.decode(namespace: namespace, bytes: bytes))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test("same result as parse + decode(json:)", arguments: payloads)
    func agrees(_ text: String) {
        for namespace in [CastNamespace.media, .receiver, .connection, "urn:x-cast:com.example"] {
            let expected = Self.viaTree(namespace, text)
            #expect(Self.viaText(namespace, text) == expected, "\(namespace): \(text)")
            #expect(Self.viaBytes(namespace, text) == expected, "\(namespace): \(text)")
        }
    }

    @Test func benchmarkPayloadDecodes() throws {
        let payload = try CastPayload.decode(namespace: .media, utf8: Self.payloads[0])
        guard case .media(.mediaStatus(let requestID, let status)) = payload else {
            Issue.record("not a MEDIA_STATUS: \(payload)")
            return
        }
        #expect(requestID == RequestID(0))
        #expect(status.count == 1)
        #expect(status.first?.playerState == .playing)
        #expect(status.first?.currentTime == 12.5)
        #expect(status.first?.supportedMediaCommands == .allBasicMedia)
        #expect(status.first?.volume == Volume(level: 1, muted: false))
        #expect(status.first?.media == MediaInformation(contentID: "http://192.168.1.5/a.mp4", streamType: .buffered, contentType: "video/mp4"))
    }

    @Test func escapedKeysAreFoundByLookup() throws {
        let payload = try CastPayload.decode(namespace: .media, utf8: #"{"\u0074ype":"PAUSE","requestId":9}"#)
        #expect(payload == .media(.pause(requestID: 9, mediaSessionID: nil)))
    }
}
