import CastCore
import CastSender
import CastlineDaemon
import Testing

@Suite struct AnnouncementSnapshotTests {
    static let player = ApplicationInfo(appID: "CC1AD845", displayName: "Default Media Receiver",
                                        namespaces: ["urn:x-cast:com.google.cast.media"], sessionID: "s", transportID: "t")

    func status(_ json: String) throws -> MediaStatus { try MediaStatus(json: JSONValue.parse(json)) }

    static let movie = #"""
        {"mediaSessionId": 4, "playerState": "PLAYING", "currentTime": 95.5, "playbackRate": 1, "supportedMediaCommands": 12303,
         "activeTrackIds": [1],
         "media": {"contentId": "http://a/movie.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 600,
                   "tracks": [{"trackId": 1, "type": "TEXT", "trackContentId": "http://a/en.vtt"}],
                   "metadata": {"metadataType": 1, "title": "Movie", "images": [{"url": "http://a/poster.jpg"}]}}}
        """#

    @Test func playingMediaComesBackAtItsPositionWithItsTracks() throws {
        let snapshot = AnnouncementSnapshot(app: Self.player, media: try status(Self.movie), volume: 0.35, muted: false)
        let (plan, partly) = snapshot.plan(elapsed: 4)
        guard case .load(let app, let media, let options) = plan else { Issue.record("\(plan)"); return }
        #expect(app == "CC1AD845" && media.contentID == "http://a/movie.mp4" && media.tracks.count == 1)
        #expect(media.metadata?.title == "Movie", "the metadata (and its images) go back as they were")
        #expect(options.startTime == 95.5 && options.autoplay && options.activeTrackIDs == [1], "buffered media: the position, not plus the announcement")
        #expect(partly == nil)
    }

    @Test func pausedStaysPausedAndUnknownLengthsMoveOnByTheAnnouncement() throws {
        let paused = try status(Self.movie.split(separator: "PLAYING").joined(separator: "PAUSED"))
        guard case .load(_, _, let options) = AnnouncementSnapshot(app: Self.player, media: paused, volume: nil, muted: nil).plan(elapsed: 4).restore
        else { Issue.record("not a load"); return }
        #expect(!options.autoplay && options.startTime == 95.5)
        let open = try status(#"{"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 10, "playbackRate": 1, "supportedMediaCommands": 1, "media": {"contentId": "http://a/radio.aac", "contentType": "audio/aac", "streamType": "BUFFERED"}}"#)
        guard case .load(_, _, let moved) = AnnouncementSnapshot(app: Self.player, media: open, volume: nil, muted: nil).plan(elapsed: 4).restore
        else { Issue.record("not a load"); return }
        #expect(moved.startTime == 14, "no duration: it went on playing while the announcement did")
    }

    @Test func aLiveStreamRejoinsItsLiveEdgeAndSaysSo() throws {
        let live = try status(#"{"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 3600, "playbackRate": 1, "supportedMediaCommands": 1, "media": {"contentId": "http://a/live.m3u8", "contentType": "application/x-mpegURL", "streamType": "LIVE"}}"#)
        let (plan, partly) = AnnouncementSnapshot(app: Self.player, media: live, volume: nil, muted: nil).plan(elapsed: 4)
        guard case .load(_, _, let options) = plan else { Issue.record("\(plan)"); return }
        #expect(options.startTime == nil && partly?.contains("live edge") == true)
    }

    @Test func aQueueComesBackAtItsItemWithItsRepeatMode() throws {
        let queue = try status(#"""
            {"mediaSessionId": 2, "playerState": "PLAYING", "currentTime": 12, "playbackRate": 1, "supportedMediaCommands": 1,
             "currentItemId": 8, "repeatMode": "REPEAT_ALL",
             "media": {"contentId": "http://a/2.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 60},
             "items": [{"itemId": 7, "media": {"contentId": "http://a/1.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"}},
                       {"itemId": 8, "media": {"contentId": "http://a/2.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"}},
                       {"itemId": 9, "media": {"contentId": "http://a/3.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"}}]}
            """#)
        let (plan, _) = AnnouncementSnapshot(app: Self.player, media: queue, volume: nil, muted: nil).plan(elapsed: 4)
        guard case .queue(_, let items, let index, let start, let mode, let autoplay) = plan else { Issue.record("\(plan)"); return }
        #expect(items.count == 3 && items.allSatisfy { $0.itemID == nil }, "the device numbers the items again")
        #expect(index == 1 && start == 12 && mode == .all && autoplay)
    }

    @Test func whatCannotComeBackSaysWhy() throws {
        let chat = ApplicationInfo(appID: "CA571E00", displayName: "plugin examples", namespaces: ["urn:x-cast:com.example.chat"],
                                   sessionID: "s", transportID: "t")
        guard case .impossible(let noStatus) = AnnouncementSnapshot(app: chat, media: nil, volume: nil, muted: nil).plan(elapsed: 1).restore,
              case .impossible(let noID) = AnnouncementSnapshot(app: Self.player, media: try status(#"{"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 1, "playbackRate": 1, "supportedMediaCommands": 1, "media": {"contentId": "", "contentType": "audio/mpeg", "streamType": "BUFFERED"}}"#), volume: nil, muted: nil).plan(elapsed: 1).restore,
              case .impossible(let drm) = AnnouncementSnapshot(app: Self.player, media: try status(#"{"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 1, "playbackRate": 1, "supportedMediaCommands": 1, "media": {"contentId": "x", "contentType": "video/mp4", "streamType": "BUFFERED", "customData": {"licenseUrl": "https://lic"}}}"#), volume: nil, muted: nil).plan(elapsed: 1).restore
        else { Issue.record("expected three refusals"); return }
        #expect(noStatus.contains("reports no media status") && noID.contains("no contentId") && drm.contains("DRM"))
    }

    @Test func anIdleDeviceStaysIdle() {
        guard case .nothing = AnnouncementSnapshot(app: nil, media: nil, volume: 1, muted: false).plan(elapsed: 1).restore else {
            Issue.record("an idle device is left idle"); return
        }
        guard case .nothing = AnnouncementSnapshot(app: Self.player, media: nil, volume: 1, muted: false).plan(elapsed: 1).restore else {
            Issue.record("the player with nothing on is left idle"); return
        }
    }
}

