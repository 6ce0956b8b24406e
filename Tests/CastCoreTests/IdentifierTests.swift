import Testing
@testable import CastCore

@Suite("Namespaces, ids and open enums")
struct IdentifierTests {
    @Test func namespaces() {
        #expect(CastNamespace.connection.rawValue == "urn:x-cast:com.google.cast.tp.connection")
        #expect(CastNamespace.heartbeat.rawValue == "urn:x-cast:com.google.cast.tp.heartbeat")
        #expect(CastNamespace.deviceAuth.rawValue == "urn:x-cast:com.google.cast.tp.deviceauth")
        #expect(CastNamespace.receiver.rawValue == "urn:x-cast:com.google.cast.receiver")
        #expect(CastNamespace.media.rawValue == "urn:x-cast:com.google.cast.media")
        #expect(CastNamespace.multizone.rawValue == "urn:x-cast:com.google.cast.multizone")
        #expect(CastNamespace.heartbeat.tail == "com.google.cast.tp.heartbeat")
        #expect(CastNamespace("com.example.custom").tail == "com.example.custom")
        #expect(CastNamespace.connection.isPlatform && CastNamespace.heartbeat.isPlatform && CastNamespace.deviceAuth.isPlatform)
        #expect(!CastNamespace.media.isPlatform && !CastNamespace.receiver.isPlatform)
        #expect(CastNamespace.media.hasCastPrefix && !CastNamespace("urn:x-cast:").hasCastPrefix)
        let literal: CastNamespace = "urn:x-cast:com.google.cast.media"
        #expect(literal == .media)
        #expect("\(CastNamespace.media)" == "urn:x-cast:com.google.cast.media")
    }

    @Test func requestIDs() {
        #expect(RequestID.unsolicited.isUnsolicited)
        #expect(RequestID(rawValue: 0) == .unsolicited)
        let id: RequestID = 7
        #expect(!id.isUnsolicited && id.rawValue == 7 && "\(id)" == "7")
        #expect(RequestID(1) < RequestID(2))
        #expect(RequestID(1).next() == 2)
        #expect(RequestID.unsolicited.next() == 1)
        #expect(RequestID.maxGenerated.next() == 1)
        #expect(RequestID(-5).next() == 1)
    }

    @Test func endpoints() {
        #expect(EndpointID.sender0.rawValue == "sender-0")
        #expect(EndpointID.receiver0.rawValue == "receiver-0")
        #expect(EndpointID.broadcast.rawValue == "*" && EndpointID.broadcast.isBroadcast)
        #expect(EndpointID("sender-vlc").isSender && !EndpointID.receiver0.isSender)
    }

    @Test func openStringEnumsKeepUnknownValues() {
        let scanning = PlayerState(rawValue: "SCANNING")
        #expect(!scanning.isKnown && scanning.rawValue == "SCANNING" && scanning.description == "SCANNING")
        #expect(PlayerState.playing.isKnown && PlayerState(rawValue: "PLAYING") == .playing)
        #expect(PlayerState.knownValues.map(\.rawValue) == ["IDLE", "PLAYING", "PAUSED", "BUFFERING", "LOADING"])
        #expect(IdleReason.knownValues.map(\.rawValue) == ["CANCELLED", "INTERRUPTED", "FINISHED", "ERROR"])
        #expect(StreamType.knownValues.map(\.rawValue) == ["BUFFERED", "LIVE", "NONE"])
        #expect(ResumeState.knownValues.map(\.rawValue) == ["PLAYBACK_START", "PLAYBACK_PAUSE"])
        #expect(RepeatMode.knownValues.map(\.rawValue) == ["REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE", "REPEAT_ALL_AND_SHUFFLE"])
        #expect(TrackType.knownValues.map(\.rawValue) == ["TEXT", "AUDIO", "VIDEO"])
        #expect(TextTrackType.knownValues.map(\.rawValue) == ["SUBTITLES", "CAPTIONS", "DESCRIPTIONS", "CHAPTERS", "METADATA"])
        #expect(VolumeControlType.knownValues.map(\.rawValue) == ["attenuation", "fixed", "master"])
        #expect(AppAvailability.knownValues.map(\.rawValue) == ["APP_AVAILABLE", "APP_UNAVAILABLE"])
        #expect(MediaCategory.knownValues.map(\.rawValue) == ["AUDIO", "VIDEO", "IMAGE"])
        #expect(QueueType.knownValues.count == 9 && QueueType.liveTV.rawValue == "LIVE_TV")
        for reason in ["INVALID_COMMAND", "INVALID_SESSION_ID", "INVALID_MEDIA_SESSION_ID", "INVALID_PARAMS",
                       "BAD_PARAMETER", "NOT_FOUND", "SYSTEM_ERROR", "CANCELLED"] {
            #expect(ErrorReason(rawValue: reason).isKnown, "\(reason)")
        }
        let literal: StreamType = "LIVE"
        #expect(literal == .live)
    }

    @Test func hdrTypes() {
        #expect(HDRType.knownValues.map(\.rawValue) == ["sdr", "hdr", "dv"])
        #expect(HDRType.sdr.iosValue == 0 && HDRType.dolbyVision.iosValue == 1 && HDRType.hdr.iosValue == 2)
        #expect(HDRType(rawValue: "hlg").iosValue == -1 && !HDRType(rawValue: "hlg").isKnown)
        #expect(HDRType(iosValue: 0) == .sdr && HDRType(iosValue: 1) == .dolbyVision && HDRType(iosValue: 2) == .hdr)
        #expect(HDRType(iosValue: -1) == nil && HDRType(iosValue: 3) == nil)
    }

    @Test func openIntEnumsKeepUnknownValues() {
        #expect(ConnectionType.strong.rawValue == 0 && ConnectionType.weak.rawValue == 1 && ConnectionType.invisible.rawValue == 2)
        #expect(ConnectionType(rawValue: 9).name == nil && !ConnectionType(rawValue: 9).isKnown)
        #expect(ConnectionType(rawValue: 9).description == "9" && ConnectionType.weak.description == "WEAK(1)")
        #expect(MetadataType.knownNames.map(\.name) == ["GENERIC", "MOVIE", "TV_SHOW", "MUSIC_TRACK", "PHOTO"])
        #expect(MetadataType(name: "MUSIC_TRACK") == .musicTrack && MetadataType(name: "nope") == nil)
        #expect(MetadataType.knownValues == [.generic, .movie, .tvShow, .musicTrack, .photo])
        #expect(DetailedErrorCode.knownNames.count == 27)
        #expect(DetailedErrorCode.textUnknown.name == "TEXT_UNKNOWN" && DetailedErrorCode.textUnknown.rawValue == 600)
        #expect(DetailedErrorCode(rawValue: 104).name == "MEDIA_SRC_NOT_SUPPORTED")
        #expect(DetailedErrorCode.hlsNetworkKeyLoad.rawValue == 314 && DetailedErrorCode.smoothManifest.rawValue == 431)
        #expect(DetailedErrorCode(rawValue: 905).name == nil)
    }

    @Test("supportedMediaCommands bits", arguments: [
        (UInt64(15), ["PAUSE", "SEEK", "STREAM_VOLUME", "STREAM_MUTE"]),
        (207, ["PAUSE", "SEEK", "STREAM_VOLUME", "STREAM_MUTE", "QUEUE_NEXT", "QUEUE_PREV"]),
        (12303, ["PAUSE", "SEEK", "STREAM_VOLUME", "STREAM_MUTE", "EDIT_TRACKS", "PLAYBACK_RATE"]),
        (274_447, ["PAUSE", "SEEK", "STREAM_VOLUME", "STREAM_MUTE", "EDIT_TRACKS", "PLAYBACK_RATE", "STREAM_TRANSFER"]),
        (514_383, ["PAUSE", "SEEK", "STREAM_VOLUME", "STREAM_MUTE", "QUEUE_NEXT", "QUEUE_SHUFFLE", "QUEUE_REPEAT_ONE",
                   "EDIT_TRACKS", "LIKE", "DISLIKE", "FOLLOW", "UNFOLLOW", "STREAM_TRANSFER"]),
    ] as [(UInt64, [String])])
    func supportedMediaCommands(raw: UInt64, names: [String]) {
        let commands = SupportedMediaCommands(rawValue: raw)
        #expect(commands.names == names)
        #expect(commands.unknownBits == 0)
    }

    @Test func supportedMediaCommandsConstants() {
        #expect(SupportedMediaCommands.allBasicMedia.rawValue == 12303)
        #expect(SupportedMediaCommands.allBasicMedia == [.pause, .seek, .streamVolume, .streamMute, .editTracks, .playbackRate])
        #expect(SupportedMediaCommands.queueRepeat == [.queueRepeatAll, .queueRepeatOne])
        let dmr = SupportedMediaCommands(rawValue: 274_447)
        #expect(dmr.contains(.allBasicMedia) && dmr.contains(.streamTransfer) && !dmr.contains(.queueNext))
        let unknown = SupportedMediaCommands(rawValue: 1 << 40 | 1)
        #expect(unknown.unknownBits == 1 << 40 && unknown.contains(.pause))
        #expect(unknown.description == "PAUSE|0x10000000000")
        #expect(SupportedMediaCommands().description == "none")
    }
}
