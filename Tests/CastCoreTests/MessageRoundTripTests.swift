import Testing
@testable import CastCore

/// Sample values for every message case; each must survive model → JSON → text → JSON → model.
enum Samples {
    static let metadata = MediaMetadata(
        metadataType: .musicTrack, title: "Caf\u{e9} \"Live\"", subtitle: "sub", images: [
            Image(url: "https://example.com/a.jpg", width: 640, height: 480), Image(url: "https://example.com/b.png"),
        ], releaseDate: "2020-01-02", extra: ["thumb": "https://example.com/t.jpg", "custom": ["x": 1]])

    static var fullMetadata: MediaMetadata {
        var value = metadata
        value.studio = "Studio"
        value.seriesTitle = "Series"
        value.season = 2
        value.episode = 5
        value.originalAirDate = "2019-05-05"
        value.albumName = "Album"
        value.albumArtist = "Album Artist"
        value.artist = "Artist"
        value.composer = "Composer"
        value.trackNumber = 3
        value.discNumber = 1
        value.location = "Paris"
        value.latitude = 48.8566
        value.longitude = 2.3522
        value.width = 4000
        value.height = 3000
        value.creationDateTime = "2020-01-02T03:04:05Z"
        return value
    }

    static let mediaInfo = MediaInformation(
        contentID: "http://192.168.1.2:8000/\u{e9}t\u{e9}.mp4", contentURL: "http://192.168.1.2:8000/x.mp4",
        streamType: .buffered, contentType: "video/mp4", metadata: fullMetadata, duration: 123.5,
        tracks: [
            MediaTrack(trackID: 1, type: .text, trackContentID: "http://x/sub.vtt", trackContentType: "text/vtt",
                       subtype: .subtitles, language: "en-US", name: "English", customData: ["k": "v"]),
            MediaTrack(trackID: 2, type: .audio),
        ],
        textTrackStyle: ["backgroundColor": "#00000000"], customData: ["app": [1, 2]], mediaCategory: .video,
        entity: "myapp://movie/1", extra: ["hlsSegmentFormat": "ts"])

    static let item = QueueItem(
        itemID: 4, media: mediaInfo, autoplay: true, startTime: 1.5, preloadTime: 10, playbackDuration: 30,
        activeTrackIDs: [1], customData: ["i": 1])

    static var fullStatus: MediaStatus {
        var status = MediaStatus(
            mediaSessionID: 12, playerState: .idle, idleReason: .finished, currentTime: 42.25, playbackRate: 1.5,
            supportedMediaCommands: .allBasicMedia, volume: Volume(level: 0.5, muted: false), media: mediaInfo,
            extendedStatus: ExtendedMediaStatus(playerState: .loading, media: mediaInfo, mediaSessionID: 13))
        status.currentItemID = 4
        status.loadingItemID = 5
        status.preloadedItemID = 6
        status.repeatMode = .all
        status.items = [item, QueueItem(itemID: 5)]
        status.queueData = ["queueType": "PLAYLIST", "startIndex": 0]
        status.activeTrackIDs = [1, 2]
        status.videoInfo = VideoInfo(width: 3840, height: 2160, hdrType: .dolbyVision)
        status.customData = ["c": true]
        status.breakStatus = ["currentBreakTime": 0]
        status.liveSeekableRange = ["start": 0, "end": 100.5]
        return status
    }

    static let receiverStatus = ReceiverStatus(
        applications: [
            ApplicationInfo(
                appID: "CC1AD845", appType: "WEB", displayName: "Default Media Receiver", iconURL: "",
                isIdleScreen: false, launchedFromCloud: false, namespaces: [.media, "urn:x-cast:com.google.cast.cac"],
                senderConnected: true, sessionID: "8b2b7c52-aaaa", statusText: "Ready To Cast",
                transportID: "8b2b7c52-aaaa", universalAppID: "CC1AD845"),
        ],
        isActiveInput: true, isStandBy: false,
        volume: Volume(level: 0.44999998807907104, muted: false, controlType: .attenuation, stepInterval: 0.05),
        userEq: ["max_peaking_eqs": 0, "peaking_eqs": []])

    static let connection: [ConnectionMessage] = [
        .connect(ConnectRequest()),
        .connect(ConnectRequest(
            connType: .strong, origin: [:], userAgent: "castline/1.0",
            senderInfo: ["sdkType": 2, "version": "15.605.1.3", "platform": 4, "connectionType": 1],
            protocolVersion: 0, protocolVersionList: [0, 1])),
        .connect(ConnectRequest(connType: ConnectionType(rawValue: 7))),
        .close(reasonCode: nil),
        .close(reasonCode: 5),
        .connected([:]),
        .connected(["protocolVersion": 3]),
        .unknown(type: "SOMETHING_NEW", json: ["type": "SOMETHING_NEW", "x": [1]]),
    ]

    static let heartbeat: [HeartbeatMessage] = [.ping, .pong, .unknown(type: "PANG", json: ["type": "PANG"])]

    static let receiver: [ReceiverMessage] = [
        .launch(LaunchRequest(requestID: 1, appID: "CC1AD845")),
        .launch(LaunchRequest(requestID: 2, appID: "CC1AD845", language: "en-US",
                              supportedAppTypes: ["WEB", "ANDROID_TV"], appParams: ["a": 1])),
        .stop(requestID: 3, sessionID: "abc"),
        .stop(requestID: 4, sessionID: nil),
        .getStatus(requestID: 5),
        .getAppAvailability(requestID: 6, appIDs: ["CC1AD845", "233637DE"]),
        .setVolume(requestID: 7, volume: Volume(level: 0.25)),
        .setVolume(requestID: 8, volume: Volume(muted: true)),
        .receiverStatus(requestID: 0, status: receiverStatus),
        .receiverStatus(requestID: nil, status: ReceiverStatus()),
        .launchError(requestID: 9, reason: .notFound),
        .launchError(requestID: nil, reason: nil),
        .invalidRequest(requestID: 10, reason: .invalidCommand),
        .appAvailability(requestID: 11, availability: [
            AppAvailabilityEntry(appID: "CC1AD845", availability: .available),
            AppAvailabilityEntry(appID: "00000000", availability: .unavailable),
            AppAvailabilityEntry(appID: "11111111", availability: AppAvailability(rawValue: "APP_MAYBE")),
        ]),
        .appAvailability(requestID: nil, availability: []),
        .unknown(type: "NEW_THING", json: ["type": "NEW_THING", "requestId": 12]),
    ]

    static let mediaMessages: [MediaMessage] = [
        .load(LoadRequest(requestID: 1, media: MediaInformation(contentID: "x", contentType: "audio/mpeg"))),
        .load(LoadRequest(requestID: 2, sessionID: "s", media: mediaInfo, autoplay: false, currentTime: 0,
                          activeTrackIDs: [1], playbackRate: 1.25, customData: ["c": 1])),
        .play(requestID: 3, mediaSessionID: 1),
        .play(requestID: 4, mediaSessionID: nil),
        .pause(requestID: 5, mediaSessionID: 1),
        .stop(requestID: 6, mediaSessionID: 1),
        .getStatus(requestID: 7, mediaSessionID: nil),
        .seek(SeekRequest(requestID: 8, mediaSessionID: 1, currentTime: 30)),
        .seek(SeekRequest(requestID: 9, mediaSessionID: 1, relativeTime: -10, resumeState: .playbackPause, customData: [:])),
        .setVolume(requestID: 10, mediaSessionID: 1, volume: Volume(level: 0.1, muted: false)),
        .setPlaybackRate(requestID: 11, mediaSessionID: 1, playbackRate: 2),
        .editTracksInfo(requestID: 12, mediaSessionID: 1, activeTrackIDs: [1, 3]),
        .editTracksInfo(requestID: 13, mediaSessionID: 1, activeTrackIDs: nil),
        .queueLoad(QueueLoadRequest(requestID: 14, items: [item, QueueItem(media: mediaInfo, autoplay: true, playbackDuration: 5)],
                                    startIndex: 1, currentTime: 3, repeatMode: .single, customData: ["q": 1])),
        .queueInsert(QueueInsertRequest(requestID: 15, mediaSessionID: 1, items: [QueueItem(media: mediaInfo, autoplay: true,
                                        startTime: 0, preloadTime: 20)], insertBefore: 4, currentItemIndex: 0,
                                        currentTime: 1, customData: nil)),
        .queueUpdate(QueueUpdateRequest(requestID: 16, mediaSessionID: 1, jump: -1)),
        .queueUpdate(QueueUpdateRequest(requestID: 17, mediaSessionID: 1, currentItemID: 4, repeatMode: .allAndShuffle,
                                        shuffle: true, currentTime: 2, items: [QueueItem(itemID: 4, autoplay: false)],
                                        customData: ["u": nil])),
        .queueRemove(QueueRemoveRequest(requestID: 18, mediaSessionID: 1, itemIDs: [4, 5], currentItemID: 6, currentTime: 0)),
        .queueReorder(QueueReorderRequest(requestID: 19, mediaSessionID: 1, itemIDs: [5, 4], insertBefore: 6,
                                          currentItemID: 5, currentTime: 1, customData: [1])),
        .mediaStatus(requestID: 0, status: []),
        .mediaStatus(requestID: 20, status: [fullStatus, MediaStatus(mediaSessionID: 2, playerState: "SCANNING")]),
        .mediaStatus(requestID: nil, status: [MediaStatus(mediaSessionID: 1, playerState: .playing)]),
        .loadFailed(requestID: 21, itemID: 4, detailedErrorCode: .mediaSrcNotSupported),
        .loadFailed(requestID: nil, itemID: nil, detailedErrorCode: DetailedErrorCode(rawValue: 999)),
        .loadCancelled(requestID: 22, itemID: 4),
        .invalidPlayerState(requestID: 23),
        .invalidRequest(requestID: 24, reason: .invalidMediaSessionID),
        .invalidRequest(requestID: nil, reason: ErrorReason(rawValue: "SOMETHING")),
        .error(["requestId": 25, "detailedErrorCode": 104, "reason": "GENERIC_LOAD_ERROR", "itemId": 1]),
        .unknown(type: "QUEUE_GET_ITEM_IDS", json: ["type": "QUEUE_GET_ITEM_IDS", "requestId": 26, "mediaSessionId": 1]),
    ]
}

@Suite("Message round trips")
struct MessageRoundTripTests {
    @Test("connection", arguments: Samples.connection)
    func connection(_ message: ConnectionMessage) throws {
        try expectRoundTrip(message)
        #expect(message.requestID == nil)
        #expect(message.json["type"]?.string == message.typeName)
    }

    @Test("heartbeat", arguments: Samples.heartbeat)
    func heartbeat(_ message: HeartbeatMessage) throws {
        try expectRoundTrip(message)
        #expect(message.requestID == nil)
        #expect(message.json["type"]?.string == message.typeName)
    }

    @Test("receiver", arguments: Samples.receiver)
    func receiver(_ message: ReceiverMessage) throws {
        try expectRoundTrip(message)
        let typeKey = if case .appAvailability = message { "responseType" } else { "type" }
        #expect(message.json[typeKey]?.string == message.typeName)
        #expect(message.json["requestId"]?.int.map { RequestID(Int($0)) } == message.requestID)
    }

    @Test("media", arguments: Samples.mediaMessages)
    func media(_ message: MediaMessage) throws {
        try expectRoundTrip(message)
        #expect(message.json["type"]?.string == message.typeName)
        #expect(message.json["requestId"]?.int.map { RequestID(Int($0)) } == message.requestID)
    }

    @Test func everyCaseIsSampled() {
        #expect(Set(Samples.connection.map(\.typeName)) == ["CONNECT", "CLOSE", "CONNECTED", "SOMETHING_NEW"])
        #expect(Set(Samples.heartbeat.map(\.typeName)) == ["PING", "PONG", "PANG"])
        #expect(Set(Samples.receiver.map(\.typeName)).count == 9)
        #expect(Set(Samples.mediaMessages.map(\.typeName)).count == 21)
    }

    @Test func modelsRoundTrip() throws {
        try expectRoundTrip(Samples.fullMetadata)
        try expectRoundTrip(MediaMetadata())
        try expectRoundTrip(Samples.mediaInfo)
        try expectRoundTrip(Samples.item)
        try expectRoundTrip(QueueItem())
        try expectRoundTrip(Samples.fullStatus)
        try expectRoundTrip(Samples.receiverStatus)
        try expectRoundTrip(Volume())
        try expectRoundTrip(VideoInfo(width: 1920, height: 1080))
        try expectRoundTrip(VideoInfo(width: 1920, height: 1080, hdrType: "hlg"))
        try expectRoundTrip(ExtendedMediaStatus(playerState: .loading))
    }

    @Test func castPayloadDispatchesOnNamespace() throws {
        for message in Samples.mediaMessages {
            let payload = try CastPayload.decode(namespace: .media, utf8: message.json.serialized())
            #expect(payload == .media(message))
            #expect(payload.json == message.json)
            #expect(payload.typeName == message.typeName && payload.requestID == message.requestID)
        }
        for message in Samples.receiver {
            #expect(try CastPayload.decode(namespace: .receiver, utf8: message.json.serialized()) == .receiver(message))
        }
        for message in Samples.connection {
            #expect(try CastPayload.decode(namespace: .connection, utf8: message.json.serialized()) == .connection(message))
        }
        for message in Samples.heartbeat {
            #expect(try CastPayload.decode(namespace: .heartbeat, utf8: message.json.serialized()) == .heartbeat(message))
        }
        let custom = try CastPayload.decode(namespace: "urn:x-cast:com.example.game", utf8: #"{"type":"MOVE","requestId":4,"x":1}"#)
        #expect(custom == .custom(["type": "MOVE", "requestId": 4, "x": 1]))
        #expect(custom.typeName == "MOVE" && custom.requestID == 4)
        #expect(custom.serialized() == #"{"type":"MOVE","requestId":4,"x":1}"#)
        let bytes = Array(#"{"type":"PING"}"#.utf8)
        let fromBytes = try bytes.withUnsafeBytes { (buffer) throws(CastPayloadDecodingError) -> CastPayload in
            try CastPayload.decode(namespace: .heartbeat, bytes: buffer)
        }
        #expect(fromBytes == .heartbeat(.ping))
    }

    @Test func requestShapesMatchWhatSendersSend() throws {
        let load = MediaMessage.load(LoadRequest(requestID: 3, sessionID: "s1",
                                                 media: MediaInformation(contentID: "u", contentType: "video/mp4"),
                                                 autoplay: true, currentTime: 0))
        #expect(load.json.serialized()
            == #"{"type":"LOAD","requestId":3,"sessionId":"s1","media":{"contentId":"u","streamType":"BUFFERED","contentType":"video/mp4"},"autoplay":true,"currentTime":0.0}"#)
        #expect(ConnectionMessage.connect(ConnectRequest()).json.serialized() == #"{"type":"CONNECT"}"#)
        #expect(HeartbeatMessage.ping.json.serialized() == #"{"type":"PING"}"#)
        #expect(ReceiverMessage.getAppAvailability(requestID: 2, appIDs: ["CC1AD845"]).json.serialized()
            == #"{"type":"GET_APP_AVAILABILITY","requestId":2,"appId":["CC1AD845"]}"#)
        #expect(ReceiverMessage.setVolume(requestID: 5, volume: Volume(muted: true)).json.serialized()
            == #"{"type":"SET_VOLUME","requestId":5,"volume":{"muted":true}}"#)
        #expect(MediaMessage.queueUpdate(QueueUpdateRequest(requestID: 9, mediaSessionID: 2, jump: 1)).json.serialized()
            == #"{"type":"QUEUE_UPDATE","requestId":9,"mediaSessionId":2,"jump":1}"#)
        // An idle receiver's status has no applications key at all.
        #expect(ReceiverStatus().json.serialized() == "{}")
    }
}
