import CastCore
import CastLogging
import CastProtocol
import CastTestSupport
import Testing
@testable import CastReceiverSim

@Suite("Receiver simulator: media playback")
struct MediaPlaybackTests {
    @Test func loadBuffersThenPlays() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR()
        sim.connect(2, sender: "sender-b")
        sim.connect(2, sender: "sender-b", to: transport)
        let start = sim.now
        let outputs = sim.load(title: "Big Buck Bunny")
        let statuses = SimHarness.mediaStatuses(outputs)
        // Unsolicited IDLE + extendedStatus LOADING to both, then BUFFERING (requestId to the requester).
        try #require(statuses.count == 4)
        let loading = statuses[0]
        #expect(loading.requestID == 0 && loading.status.first?.playerState == .idle && loading.status.first?.idleReason == nil)
        #expect(loading.status.first?.extendedStatus?.playerState == .loading)
        #expect(loading.status.first?.isLoading == true)
        let reply = try #require(statuses.first { $0.requestID == 2 })
        #expect(reply.sent.connection == 1 && reply.sent.message.sourceID == transport && reply.sent.message.destinationID == "sender-0")
        let status = try #require(reply.status.first)
        #expect(status.playerState == .buffering && status.mediaSessionID == 1)
        #expect(status.media?.contentType == "video/mp4" && status.media?.metadata?.title == "Big Buck Bunny")
        #expect(status.media?.contentID == "http://example.com/movie.mp4" && status.media?.streamType == .buffered)
        #expect(status.supportedMediaCommands.rawValue == 274_447)
        #expect(status.volume == Volume(level: 1, muted: false))
        #expect(status.currentItemID != nil && status.repeatMode == .off && status.items == nil)
        let toOther = statuses.filter { $0.sent.connection == 2 }
        #expect(toOther.count == 2 && toOther.allSatisfy { $0.requestID == 0 && $0.sent.message.destinationID == "sender-b" })
        #expect(sim.device.nextDeadline == start + 0.25)
        #expect(sim.advance(by: 0.125).isEmpty)
        let played = SimHarness.mediaStatuses(sim.advance(by: 0.125))
        #expect(played.count == 2 && played.allSatisfy { $0.requestID == 0 && $0.status.first?.playerState == .playing })
        #expect(played.first?.status.first?.currentTime == 0)
        #expect(sim.device.nextDeadline == start + 60.25)
    }

    @Test func loadingStatusCanBeTurnedOff() {
        var sim = SimHarness(timing: PlaybackTiming(bufferingDelay: 0, sendsLoadingStatus: false))
        sim.launchDMR()
        let statuses = SimHarness.mediaStatuses(sim.load())
        #expect(statuses.count == 1 && statuses.first?.status.first?.playerState == .playing)
    }

    @Test func pauseAndPlay() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load()
        sim.advance(by: 0.25)
        sim.advance(by: 5)
        let paused = try #require(SimHarness.mediaStatuses(sim.media("PAUSE", ["mediaSessionId": 1])).first?.status.first)
        #expect(paused.playerState == .paused && paused.currentTime == 5)
        sim.advance(by: 100)
        #expect(sim.mediaStatus()?.currentTime == 5)
        #expect(sim.device.nextDeadline == nil)
        let playing = try #require(SimHarness.mediaStatuses(sim.media("PLAY", ["mediaSessionId": 1])).first?.status.first)
        #expect(playing.playerState == .playing && playing.currentTime == 5)
        sim.advance(by: 2)
        #expect(sim.mediaStatus()?.currentTime == 7)
        // PLAY while playing is harmless: just the status back.
        let again = SimHarness.mediaStatuses(sim.media("PLAY"))
        #expect(again.count == 1 && again.first?.status.first?.playerState == .playing)
    }

    @Test func pauseDuringBufferingEndsPaused() {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load()
        let reply = SimHarness.mediaStatuses(sim.media("PAUSE", ["mediaSessionId": 1]))
        #expect(reply.first?.status.first?.playerState == .buffering)
        let after = SimHarness.mediaStatuses(sim.advance(by: 0.25))
        #expect(after.first?.status.first?.playerState == .paused)
    }

    @Test func seekWithResumeState() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load()
        sim.advance(by: 0.25)
        let paused = try #require(SimHarness.mediaStatuses(sim.media("SEEK", [
            "mediaSessionId": 1, "currentTime": 42.5, "resumeState": "PLAYBACK_PAUSE",
        ])).first?.status.first)
        #expect(paused.playerState == .paused && paused.currentTime == 42.5)
        let relative = try #require(SimHarness.mediaStatuses(sim.media("SEEK", [
            "mediaSessionId": 1, "relativeTime": -2.5, "resumeState": "PLAYBACK_START",
        ])).first?.status.first)
        #expect(relative.playerState == .playing && relative.currentTime == 40)
        let kept = try #require(SimHarness.mediaStatuses(sim.media("SEEK", ["mediaSessionId": 1, "currentTime": 1000])).first?.status.first)
        #expect(kept.playerState == .playing && kept.currentTime == 60)
        let finished = SimHarness.mediaStatuses(sim.advance(by: 0))
        #expect(finished.first?.status.first?.idleReason == .finished)
    }

    @Test func clockFollowsPlaybackRate() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load(duration: 600)
        sim.advance(by: 0.25)
        sim.advance(by: 10)
        #expect(sim.mediaStatus()?.currentTime == 10)
        let fast = try #require(SimHarness.mediaStatuses(sim.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": 2])).first)
        #expect(fast.status.first?.playbackRate == 2)
        sim.advance(by: 5)
        #expect(sim.mediaStatus()?.currentTime == 20)
        #expect(sim.device.nextDeadline == sim.now + 290)
        let invalid = SimHarness.sent(sim.media("SET_PLAYBACK_RATE", ["mediaSessionId": 1, "playbackRate": 0]))
        #expect(invalid.first?.json == ["type": "INVALID_REQUEST", "requestId": 6, "reason": "INVALID_PARAMS"])
    }

    @Test func bufferedMediaFinishesAtItsDuration() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load(duration: 30)
        let start = sim.now
        #expect(sim.device.nextDeadline == start + 0.25)
        sim.advance(by: 0.25)
        #expect(sim.device.nextDeadline == start + 30.25)
        #expect(sim.advance(by: 29.9).isEmpty)
        let end = SimHarness.mediaStatuses(sim.advance(by: 10))
        let status = try #require(end.first?.status.first)
        #expect(end.count == 1 && end.first?.requestID == 0)
        #expect(status.playerState == .idle && status.idleReason == .finished && status.currentTime == 30)
        #expect(sim.device.nextDeadline == nil)
        #expect(sim.mediaStatus() == nil)
        let play = SimHarness.sent(sim.media("PLAY", ["mediaSessionId": 1]))
        #expect(play.first?.type == "INVALID_PLAYER_STATE")
    }

    @Test func durationComesFromARuleWhenTheLoadHasNone() throws {
        var sim = SimHarness(rules: [MediaRule(contentTypeGlob: "audio/*", duration: 12)])
        sim.launchDMR()
        let reply = try #require(SimHarness.mediaStatuses(sim.load(contentType: "audio/mpeg", duration: nil)).last?.status.first)
        #expect(reply.media?.duration == 12)
        sim.advance(by: 0.25)
        #expect(SimHarness.mediaStatuses(sim.advance(by: 12)).first?.status.first?.idleReason == .finished)
    }

    @Test func liveStreamsNeverFinish() {
        var sim = SimHarness(rules: [MediaRule(duration: 5)])
        sim.launchDMR()
        sim.load(streamType: "LIVE", duration: nil)
        sim.advance(by: 0.25)
        #expect(sim.device.nextDeadline == nil)
        #expect(sim.advance(by: 1_000_000).isEmpty)
        let status = sim.mediaStatus()
        #expect(status?.playerState == .playing && status?.currentTime == 1_000_000)
    }

    @Test func unknownDurationPlaysOn() {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load(duration: 0)
        sim.advance(by: 0.25)
        #expect(sim.device.nextDeadline == nil)
        sim.advance(by: 3600)
        #expect(sim.mediaStatus()?.playerState == .playing)
    }

    @Test func vlcStyleStringAutoplay() {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load(streamType: "LIVE", duration: nil, extra: ["autoplay": "false"])
        let after = SimHarness.mediaStatuses(sim.advance(by: 0.25))
        #expect(after.first?.status.first?.playerState == .paused)
        var playing = SimHarness()
        playing.launchDMR()
        playing.load(extra: ["autoplay": "true", "currentTime": 12])
        let started = SimHarness.mediaStatuses(playing.advance(by: 0.25))
        #expect(started.first?.status.first?.playerState == .playing && started.first?.status.first?.currentTime == 12)
    }

    @Test func wrongSessionAndMissingSession() {
        var sim = SimHarness()
        sim.launchDMR()
        #expect(SimHarness.sent(sim.media("PAUSE")).map(\.json) == [["type": "INVALID_PLAYER_STATE", "requestId": 2]])
        sim.load()
        let wrong = SimHarness.sent(sim.media("PAUSE", ["mediaSessionId": 99]))
        #expect(wrong.map(\.json) == [["type": "INVALID_REQUEST", "requestId": 4, "reason": "INVALID_MEDIA_SESSION_ID"]])
        let seek = SimHarness.sent(sim.media("SEEK", ["mediaSessionId": 2, "currentTime": 1]))
        #expect(seek.first?.json["reason"] == "INVALID_MEDIA_SESSION_ID")
        #expect(sim.snapshot.rejectedMessages == 3)
    }

    @Test func malformedMediaRequests() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR()
        let invalidCommand: JSONValue = ["type": "INVALID_REQUEST", "requestId": 0, "reason": "INVALID_COMMAND"]
        #expect(SimHarness.sent(sim.send(["type": "PLAY", "mediaSessionId": 1], on: .media, to: transport)).map(\.json) == [invalidCommand])
        #expect(SimHarness.sent(sim.raw("{\"type\":\"LOAD\",", on: .media, to: transport)).map(\.json) == [invalidCommand])
        #expect(SimHarness.sent(sim.raw("\"LOAD\"", on: .media, to: transport)).map(\.json) == [invalidCommand])
        let unknown = SimHarness.sent(sim.send(["type": "DANCE", "requestId": 9], on: .media, to: transport))
        #expect(unknown.map(\.json) == [["type": "INVALID_REQUEST", "requestId": 9, "reason": "INVALID_COMMAND"]])
        let noMedia = SimHarness.sent(sim.send(["type": "LOAD", "requestId": 10], on: .media, to: transport))
        #expect(noMedia.map(\.json) == [["type": "INVALID_REQUEST", "requestId": 10, "reason": "INVALID_PARAMS"]])
        #expect(noMedia.first?.message.sourceID == transport)
    }

    @Test func mediaRuleGivesVideoInfo() throws {
        let uhd = VideoInfo(width: 3840, height: 2160, hdrType: .hdr)
        var sim = SimHarness(rules: [
            MediaRule(contentIdGlob: "*/uhd/*.mp[4v]", contentTypeGlob: "video/*", videoInfo: uhd),
            MediaRule(videoInfo: VideoInfo(width: 1280, height: 720, hdrType: .sdr)),
        ])
        sim.launchDMR()
        let outputs = sim.load(contentID: "http://cdn.example/uhd/film.mp4")
        let reply = try #require(SimHarness.mediaStatuses(outputs).last)
        #expect(reply.status.first?.videoInfo == uhd)
        #expect(reply.sent.json["status"]?[0]?["videoInfo"] == ["width": 3840, "height": 2160, "hdrType": "hdr"])
        let other = try #require(SimHarness.mediaStatuses(sim.load(contentID: "http://cdn.example/sd/film.mp4")).last)
        #expect(other.status.first?.videoInfo == VideoInfo(width: 1280, height: 720, hdrType: .sdr))
        let audio = try #require(SimHarness.mediaStatuses(sim.load(contentID: "http://cdn.example/uhd/a.mp4", contentType: "audio/mp4")).last)
        #expect(audio.status.first?.videoInfo?.width == 1280)
    }

    @Test func contentUrlIsMatchedToo() throws {
        var sim = SimHarness(rules: [MediaRule(contentIdGlob: "https://*.m3u8", loadError: .hlsManifestMaster)])
        sim.launchDMR()
        let outputs = sim.media("LOAD", ["media": [
            "contentId": "entity-42", "contentUrl": "https://example.com/live.m3u8", "contentType": "application/x-mpegurl",
        ]])
        #expect(SimHarness.mediaMessage(outputs, type: "LOAD_FAILED")
            == .loadFailed(requestID: 2, itemID: nil, detailedErrorCode: .hlsManifestMaster))
    }

    @Test func loadErrorsFromRulesAndInjection() throws {
        var sim = SimHarness(rules: [MediaRule(contentIdGlob: "*broken*", loadError: .mediaSrcNotSupported)])
        sim.launchDMR()
        let failed = sim.load(contentID: "http://example.com/broken.mkv")
        #expect(SimHarness.mediaMessage(failed, type: "LOAD_FAILED")
            == .loadFailed(requestID: 2, itemID: nil, detailedErrorCode: .mediaSrcNotSupported))
        #expect(SimHarness.mediaStatuses(failed).isEmpty)
        sim.device.failNextLoad(.mediaNetwork)
        #expect(sim.snapshot.pendingLoadFailure == .mediaNetwork)
        let injected = sim.load()
        #expect(SimHarness.sent(injected).map(\.json) == [["type": "LOAD_FAILED", "requestId": 3, "detailedErrorCode": 103]])
        #expect(sim.snapshot.pendingLoadFailure == nil)
        let works = SimHarness.mediaStatuses(sim.load())
        #expect(works.last?.status.first?.playerState == .buffering && works.last?.status.first?.mediaSessionID == 1)
    }

    @Test func newLoadInterruptsTheOldSession() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR()
        sim.connect(2, sender: "sender-b")
        sim.connect(2, sender: "sender-b", to: transport)
        sim.load()
        sim.advance(by: 3)
        let outputs = sim.load(contentID: "http://example.com/second.mp4", connection: 1)
        let statuses = SimHarness.mediaStatuses(outputs)
        let interrupted = statuses.filter { $0.status.first?.idleReason == .interrupted }
        #expect(interrupted.count == 2 && interrupted.allSatisfy { $0.requestID == 0 && $0.status.first?.mediaSessionID == 1 })
        #expect(interrupted.first?.status.first?.currentTime == 2.75)
        #expect(statuses.first?.status.first?.idleReason == .interrupted)
        let reply = try #require(statuses.first { $0.requestID == 3 })
        #expect(reply.status.first?.mediaSessionID == 2 && reply.status.first?.media?.contentID == "http://example.com/second.mp4")
    }

    @Test func stopEndsTheMediaSession() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load()
        sim.advance(by: 1.25)
        let stopped = SimHarness.mediaStatuses(sim.media("STOP", ["mediaSessionId": 1]))
        let status = try #require(stopped.first?.status.first)
        #expect(stopped.first?.requestID == 3 && status.playerState == .idle && status.idleReason == .cancelled && status.currentTime == 1)
        let empty = SimHarness.mediaStatuses(sim.media("GET_STATUS"))
        #expect(empty.count == 1 && empty.first?.status.isEmpty == true)
        #expect(empty.first?.sent.json["status"] == [])
        #expect(sim.snapshot.app != nil && sim.snapshot.media == nil)
    }

    @Test func streamVolumeAndTracks() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load()
        let volume = try #require(SimHarness.mediaStatuses(sim.media("SET_VOLUME", ["mediaSessionId": 1, "volume": ["level": 3]])).first)
        #expect(volume.status.first?.volume == Volume(level: 1, muted: false))
        let muted = try #require(SimHarness.mediaStatuses(sim.media("SET_VOLUME", ["mediaSessionId": 1, "volume": ["muted": true]])).first)
        #expect(muted.status.first?.volume == Volume(level: 1, muted: true))
        let tracks = try #require(SimHarness.mediaStatuses(sim.media("EDIT_TRACKS_INFO", ["mediaSessionId": 1, "activeTrackIds": [2]])).first)
        #expect(tracks.status.first?.activeTrackIDs == [2])
        #expect(sim.snapshot.volume.level == Double(Float(0.5)))
    }

    @Test func messagesSeeTransitionsDueBeforeThem() throws {
        var sim = SimHarness()
        sim.launchDMR()
        sim.load(duration: 10)
        sim.now += 20
        let outputs = sim.media("PAUSE", ["mediaSessionId": 1])
        let statuses = SimHarness.mediaStatuses(outputs)
        #expect(statuses.map { $0.status.first?.playerState } == [.playing, .idle])
        #expect(statuses.last?.status.first?.idleReason == .finished)
        #expect(SimHarness.sent(outputs).last?.type == "INVALID_PLAYER_STATE")
    }

    @Test func mediaStateChangesAreLogged() throws {
        let (system, sink) = try MemoryLogSink.makeSystem("", minimum: .debug)
        defer { system.shutdown() }
        var sim = SimHarness(logSystem: system)
        let transport = sim.launchDMR()
        sim.load()
        sim.advance(by: 0.25)
        sim.media("PAUSE", ["mediaSessionId": 7])
        system.flush()
        let records = sink.records.filter { $0.className == "MediaPlayer" }
        let loaded = try #require(records.first { $0.level == .info && $0.message.hasPrefix("loaded") })
        #expect(loaded.fields["session"] == .string(transport) && loaded.fields["device"] == .string(SimHarness.uuid))
        #expect(loaded.fields["contentId"] == "http://example.com/movie.mp4")
        #expect(records.contains { $0.level == .info && $0.fields["playerState"] == "PLAYING" })
        let rejected = try #require(records.first { $0.level == .warning })
        #expect(rejected.fields["reason"] == "INVALID_MEDIA_SESSION_ID" && rejected.fields["mediaSessionId"] == 1)
        #expect(records.contains { $0.level == .debug && $0.fields["type"] == "LOAD" })
    }
}
