import CastCore
import CastSender
import CastlineConfig
import CastlineJobs
import Testing

@Suite struct JobMediaTests {
    @Test func theLoadCarriesTheJobsMetadataAndAGuessedContentType() {
        var entry = MediaEntry(url: "http://h/lobby/dash.m3u8?token=1")
        entry.title = "Lobby"
        entry.studio = "Facilities"
        entry.streamType = .live
        let info = JobMedia.information(entry, url: entry.url)
        #expect(info.contentID == entry.url && info.contentURL == entry.url)
        #expect(info.contentType == "application/x-mpegURL")
        #expect(info.streamType == .live)
        #expect(info.metadata?.title == "Lobby" && info.metadata?.studio == "Facilities")
        let plain = JobMedia.information(MediaEntry(url: "/srv/media/clip.webm"), url: "http://10.0.0.2:8000/x/clip.webm")
        #expect(plain.contentType == "video/webm" && plain.metadata?.title == "clip.webm")
    }

    @Test func mediaIsOursByContentIdOrURL() throws {
        let ours = try MediaStatus(json: JSONValue.parse(#"{"mediaSessionId":3,"playerState":"IDLE","idleReason":"FINISHED","currentTime":0,"playbackRate":1,"supportedMediaCommands":0,"media":{"contentId":"abc","contentUrl":"http://h/a.mp4","streamType":"BUFFERED","contentType":"video/mp4"}}"#))
        let observation = JobMedia.observation(ours, urls: ["http://h/a.mp4"])
        #expect(observation == JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: true))
        #expect(!JobMedia.observation(ours, urls: ["http://h/b.mp4"]).isOurs)
    }

    @Test func contentTypesForCommonExtensions() {
        #expect(ContentTypeGuess.forPath("/a/b.MP4") == "video/mp4")
        #expect(ContentTypeGuess.forPath("http://h/x.mpd?x=1") == "application/dash+xml")
        #expect(ContentTypeGuess.forPath("http://h/noext") == nil)
        #expect(ContentTypeGuess.forPath("http://h.example/dir.v2/file") == nil)
    }
}
