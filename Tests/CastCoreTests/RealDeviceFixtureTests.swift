import Testing
@testable import CastCore

/// Payloads shaped like what real devices and peers send (see the protocol notes, sections 11–13).
@Suite("Real-device fixtures")
struct RealDeviceFixtureTests {
    static let chromecastReceiverStatus = """
        {"requestId":0,"status":{"applications":[{"appId":"CC1AD845","appType":"WEB",\
        "displayName":"Default Media Receiver","iconUrl":"","isIdleScreen":false,"launchedFromCloud":false,\
        "namespaces":[{"name":"urn:x-cast:com.google.cast.cac"},{"name":"urn:x-cast:com.google.cast.debugoverlay"},\
        {"name":"urn:x-cast:com.google.cast.broadcast"},{"name":"urn:x-cast:com.google.cast.media"}],\
        "senderConnected":true,"sessionId":"b8b6c4f2-3c0e-4f4e-9a39-0d4f2f1b7d11","statusText":"Default Media Receiver",\
        "transportId":"b8b6c4f2-3c0e-4f4e-9a39-0d4f2f1b7d11","universalAppId":"CC1AD845"}],\
        "userEq":{"high_shelf":{"frequency":4500.0,"gain_db":0.0,"quality":0.707},\
        "low_shelf":{"frequency":150.0,"gain_db":0.0,"quality":0.707},"max_peaking_eqs":0,"peaking_eqs":[]},\
        "volume":{"controlType":"master","level":0.44999998807907104,"muted":false,"stepInterval":0.009999999776482582}},\
        "type":"RECEIVER_STATUS"}
        """

    @Test func chromecastReceiverStatus() throws {
        let payload = try CastPayload.decode(namespace: .receiver, utf8: Self.chromecastReceiverStatus)
        guard case .receiver(.receiverStatus(let requestID, let status)) = payload else {
            Issue.record("decoded as \(payload)")
            return
        }
        #expect(requestID == .unsolicited && requestID?.isUnsolicited == true)
        #expect(status.isActiveInput == nil && status.isStandBy == nil)
        let volume = try #require(status.volume)
        #expect(volume.level == 0.44999998807907104 && Float(volume.level!) == 0.45)
        #expect(volume.stepInterval == 0.009999999776482582)
        #expect(volume.controlType == .master && volume.muted == false)
        let app = try #require(status.applications.first)
        #expect(app.appID == "CC1AD845" && app.universalAppID == app.appID && app.statusText == app.displayName)
        #expect(app.iconURL == "" && app.senderConnected == true)
        #expect(app.transport == EndpointID(app.sessionID))
        #expect(app.supports(.media) && !app.supports(.multizone) && app.namespaces.count == 4)
        #expect(status.activeApplication == app && status.application(withID: "CC1AD845") == app)
        #expect(status.userEq?["max_peaking_eqs"] == .int(0))
        #expect(status.userEq?["high_shelf"]?["quality"] == .double(0.707))
        // Re-encoding keeps the float32-rounded values bit for bit.
        let text = payload.serialized()
        #expect(text.contains(#""level":0.44999998807907104"#))
        #expect(text.contains(#""stepInterval":0.009999999776482582"#))
        #expect(try CastPayload.decode(namespace: .receiver, utf8: text) == payload)
    }

    @Test func mediaStatusWithEmptyStatus() throws {
        let payload = try CastPayload.decode(namespace: .media, utf8: #"{"type":"MEDIA_STATUS","status":[],"requestId":5}"#)
        #expect(payload == .media(.mediaStatus(requestID: 5, status: [])))
        #expect(try MediaMessage(json: json(#"{"type":"MEDIA_STATUS"}"#)) == .mediaStatus(requestID: nil, status: []))
    }

    static let spotifyLikeStatus = """
        {"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"playbackRate":1,"playerState":"IDLE","currentTime":0,\
        "supportedMediaCommands":514383,"volume":{"level":1,"muted":false},"activeTrackIds":[],"currentItemId":1,\
        "repeatMode":"REPEAT_OFF","extendedStatus":{"playerState":"LOADING","media":{"contentId":"spotify:track:4uLU6hMCjMI75M1A2tKUQC",\
        "streamType":"BUFFERED","mediaCategory":"AUDIO","contentType":"application/x-spotify.track",\
        "metadata":{"metadataType":3,"title":"Never Gonna","artist":"Rick","albumName":"Whenever",\
        "images":[{"url":"https://i.scdn.co/image/ab67616d","height":640,"width":640}]}},"mediaSessionId":1}}],"requestId":0}
        """

    @Test func spotifyStatusWithoutMedia() throws {
        let message = try MediaMessage(json: json(Self.spotifyLikeStatus))
        guard case .mediaStatus(let requestID, let statuses) = message, let status = statuses.first else {
            Issue.record("decoded as \(message)")
            return
        }
        #expect(requestID?.isUnsolicited == true)
        #expect(status.media == nil)
        #expect(status.effectiveMedia?.contentID == "spotify:track:4uLU6hMCjMI75M1A2tKUQC")
        #expect(status.effectiveMedia?.mediaCategory == .audio)
        #expect(status.effectiveMedia?.metadata?.metadataType == .musicTrack)
        #expect(status.effectiveMedia?.metadata?.images.first?.width == 640)
        #expect(status.playerState == .idle && status.idleReason == nil)
        #expect(status.isLoading && status.effectivePlayerState == .loading)
        #expect(status.supportedMediaCommands.rawValue == 514_383)
        #expect(status.supportedMediaCommands.contains([.like, .dislike, .follow, .unfollow, .streamTransfer, .queueShuffle]))
        #expect(!status.supportedMediaCommands.contains(.playbackRate))
        #expect(status.repeatMode == .off && status.currentItemID == 1 && status.activeTrackIDs == [])
        try expectRoundTrip(message)
    }

    @Test func idleWithReasonIsNotLoading() throws {
        let status = try MediaStatus(json: json(
            #"{"mediaSessionId":3,"playerState":"IDLE","idleReason":"FINISHED","extendedStatus":{"playerState":"LOADING"}}"#))
        #expect(!status.isLoading && status.idleReason == .finished)
        #expect(try MediaStatus(json: json(#"{"mediaSessionId":3,"playerState":"LOADING"}"#)).isLoading)
        #expect(try !MediaStatus(json: json(#"{"mediaSessionId":3,"playerState":"IDLE"}"#)).isLoading)
    }

    @Test func integersWhereDoublesGo() throws {
        let status = try MediaStatus(json: json(
            #"{"mediaSessionId":2,"playerState":"PLAYING","currentTime":0,"playbackRate":1,"supportedMediaCommands":274447,"volume":{"level":1,"muted":false}}"#))
        #expect(status.currentTime == 0 && status.playbackRate == 1 && status.volume?.level == 1)
        #expect(status.supportedMediaCommands == SupportedMediaCommands.allBasicMedia.union(.streamTransfer))
        // Doubles with integral values where integers go (JavaScript senders).
        let fromDoubles = try MediaStatus(json: json(#"{"mediaSessionId":2.0,"playerState":"PAUSED","supportedMediaCommands":15.0}"#))
        #expect(fromDoubles.mediaSessionID == 2 && fromDoubles.supportedMediaCommands.rawValue == 15)
    }

    @Test func missingOptionalsTakeDefaults() throws {
        let status = try MediaStatus(json: json(#"{"mediaSessionId":9,"playerState":"BUFFERING"}"#))
        #expect(status.currentTime == 0 && status.playbackRate == 1 && status.supportedMediaCommands == [])
        #expect(status.volume == nil && status.media == nil && status.items == nil && status.customData == nil)
        let nulls = try MediaStatus(json: json(#"{"mediaSessionId":9,"playerState":"BUFFERING","idleReason":null,"media":null,"currentTime":null}"#))
        #expect(nulls == status)
    }

    @Test func unknownKeysAndUnknownPlayerState() throws {
        let text = """
            {"type":"MEDIA_STATUS","requestId":7,"futureTopLevel":true,"status":[{"mediaSessionId":4,"playerState":"SCANNING",\
            "currentTime":1.25,"someNewField":{"deep":[1,2]},"idleReason":"USER_LEFT","repeatMode":"REPEAT_SOMETIMES",\
            "media":{"contentId":"c","contentType":"video/mp4","streamType":"LIVE_ISH","newMediaKey":[1],\
            "metadata":{"metadataType":42,"title":"t","thumb":"https://x/t.jpg"}}}]}
            """
        let message = try MediaMessage(json: json(text))
        guard case .mediaStatus(_, let statuses) = message, let status = statuses.first else {
            Issue.record("decoded as \(message)")
            return
        }
        #expect(status.playerState == PlayerState(rawValue: "SCANNING") && !status.playerState.isKnown)
        #expect(status.idleReason?.rawValue == "USER_LEFT" && status.repeatMode?.rawValue == "REPEAT_SOMETIMES")
        #expect(status.media?.streamType.rawValue == "LIVE_ISH")
        #expect(status.media?.metadata?.metadataType == MetadataType(rawValue: 42))
        #expect(status.media?.metadata?.extra == ["thumb": "https://x/t.jpg"])
        #expect(status.media?.extra == ["newMediaKey": [1]])
        let reencoded = message.json.serialized()
        #expect(reencoded.contains(#""playerState":"SCANNING""#))
        #expect(reencoded.contains(#""idleReason":"USER_LEFT""#))
        #expect(reencoded.contains(#""metadataType":42"#))
        #expect(reencoded.contains(#""thumb":"https://x/t.jpg""#))
        #expect(!reencoded.contains("someNewField"))
        try expectRoundTrip(message)
    }

    @Test func vlcSendsAutoplayAsAString() throws {
        let text = """
            {"type":"LOAD","requestId":2,"sessionId":"5f0b","media":{"contentId":"http://192.168.1.10:8010/stream",\
            "streamType":"LIVE","contentType":"video/x-matroska","metadata":{"metadataType":0,"title":"movie.mkv"}},\
            "autoplay":"false","currentTime":0}
            """
        guard case .media(.load(let request)) = try CastPayload.decode(namespace: .media, utf8: text) else {
            Issue.record("not a LOAD")
            return
        }
        #expect(request.autoplay == false && request.currentTime == 0 && request.sessionID == "5f0b")
        #expect(request.media.streamType == .live && request.media.metadata?.title == "movie.mkv")
        #expect(try LoadRequest(json: json(#"{"requestId":1,"media":{"contentId":"x"},"autoplay":"true"}"#)).autoplay == true)
        let yes = try json(#"{"requestId":1,"media":{"contentId":"x"},"autoplay":"yes"}"#)
        #expect(payloadError { () throws(CastPayloadError) in _ = try LoadRequest(json: yes) }?.description == #"autoplay: expected a boolean, found "yes""#)
    }

    @Test func openscreenAvailabilityReplyUsesResponseType() throws {
        let text = #"{"requestId":3,"responseType":"GET_APP_AVAILABILITY","availability":{"CC1AD845":"APP_AVAILABLE","0F5096E8":"APP_UNAVAILABLE"}}"#
        let payload = try CastPayload.decode(namespace: .receiver, utf8: text)
        let expected = ReceiverMessage.appAvailability(requestID: 3, availability: [
            AppAvailabilityEntry(appID: "CC1AD845", availability: .available),
            AppAvailabilityEntry(appID: "0F5096E8", availability: .unavailable),
        ])
        #expect(payload == .receiver(expected))
        #expect(payload.serialized()
            == #"{"responseType":"GET_APP_AVAILABILITY","requestId":3,"availability":{"CC1AD845":"APP_AVAILABLE","0F5096E8":"APP_UNAVAILABLE"}}"#)
        // The same reply spelled with "type" is accepted too.
        let typed = #"{"type":"GET_APP_AVAILABILITY","requestId":3,"availability":{"CC1AD845":"APP_AVAILABLE","0F5096E8":"APP_UNAVAILABLE"}}"#
        #expect(try ReceiverMessage(json: json(typed)) == expected)
        // A request stays a request.
        #expect(try ReceiverMessage(json: json(#"{"type":"GET_APP_AVAILABILITY","requestId":4,"appId":["CC1AD845"]}"#))
            == .getAppAvailability(requestID: 4, appIDs: ["CC1AD845"]))
        #expect(try ReceiverMessage(json: json(#"{"type":"GET_APP_AVAILABILITY","requestId":4,"appId":"CC1AD845"}"#))
            == .getAppAvailability(requestID: 4, appIDs: ["CC1AD845"]))
        // An unknown responseType is kept.
        let other = try ReceiverMessage(json: json(#"{"responseType":"SOMETHING","requestId":1}"#))
        #expect(other.typeName == "SOMETHING" && other.requestID == 1)
    }

    @Test func requestIDZeroIsUnsolicitedAndMissingIsNil() throws {
        let zero = try MediaMessage(json: json(#"{"type":"MEDIA_STATUS","status":[],"requestId":0}"#))
        #expect(zero.requestID == .unsolicited && zero.requestID?.isUnsolicited == true)
        let missing = try MediaMessage(json: json(#"{"type":"MEDIA_STATUS","status":[]}"#))
        #expect(missing.requestID == nil)
        let receiver = try ReceiverMessage(json: json(#"{"type":"RECEIVER_STATUS","status":{}}"#))
        #expect(receiver.requestID == nil)
        #expect(try MediaMessage(json: json(#"{"type":"LOAD_FAILED","requestId":8,"detailedErrorCode":104}"#))
            == .loadFailed(requestID: 8, itemID: nil, detailedErrorCode: .mediaSrcNotSupported))
    }

    @Test func connectionAndHeartbeatFromPeers() throws {
        let pychromecastConnect = """
            {"type":"CONNECT","origin":{},"userAgent":"PyChromecast","senderInfo":{"sdkType":2,"version":"15.605.1.3",\
            "browserVersion":"44.0.2403.30","platform":4,"systemVersion":"Macintosh; Intel Mac OS X10_10_3","connectionType":1}}
            """
        guard case .connection(.connect(let request)) = try CastPayload.decode(namespace: .connection, utf8: pychromecastConnect) else {
            Issue.record("not a CONNECT")
            return
        }
        #expect(request.userAgent == "PyChromecast" && request.origin == .object(JSONObject()))
        #expect(request.senderInfo?["platform"] == .int(4) && request.connType == nil)
        #expect(try ConnectionMessage(json: json(#"{"type":"CLOSE","reasonCode":5}"#)) == .close(reasonCode: 5))
        #expect(try ConnectionMessage(json: json(#"{"type":"CONNECTED","protocolVersion":3}"#)) == .connected(["protocolVersion": 3]))
        #expect(try CastPayload.decode(namespace: .heartbeat, utf8: #"{"type":"PONG"}"#) == .heartbeat(.pong))
        // A message without "type" is kept as unknown, never dropped.
        #expect(try HeartbeatMessage(json: json(#"{"x":1}"#)) == .unknown(type: "", json: ["x": 1]))
    }

    @Test func launchErrorAndInvalidRequestReasons() throws {
        #expect(try ReceiverMessage(json: json(#"{"type":"LAUNCH_ERROR","requestId":2,"reason":"NOT_FOUND"}"#))
            == .launchError(requestID: 2, reason: .notFound))
        #expect(try ReceiverMessage(json: json(#"{"type":"INVALID_REQUEST","requestId":2,"reason":"INVALID_COMMAND"}"#))
            == .invalidRequest(requestID: 2, reason: .invalidCommand))
        let media = try MediaMessage(json: json(#"{"type":"INVALID_REQUEST","requestId":3,"reason":"INVALID_MEDIA_SESSION_ID"}"#))
        #expect(media == .invalidRequest(requestID: 3, reason: .invalidMediaSessionID))
        let error = try MediaMessage(json: json(#"{"type":"ERROR","requestId":4,"detailedErrorCode":311,"reason":"GENERIC_LOAD_ERROR"}"#))
        #expect(error.requestID == 4 && error.typeName == "ERROR")
        guard case .error(let members) = error else {
            Issue.record("not decoded as an ERROR message: \(error)")
            return
        }
        #expect(members["detailedErrorCode"]?.int == 311)
    }
}
