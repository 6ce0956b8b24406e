import CastCore
import CastlineLocalMedia
import Testing

@Suite("TranscodeArguments and SubtitleTracks")
struct TranscodeAndSubtitleTests {
    static let streams = [
        MediaStreamInfo(index: 0, kind: .video, codec: "hevc", profile: "Main 10", width: 3840, height: 2160, frameRate: 24, hdrFormat: "HDR10"),
        MediaStreamInfo(index: 1, kind: .audio, codec: "aac", channels: 2),
        MediaStreamInfo(index: 2, kind: .subtitle, codec: "subrip", language: "fra", title: "Français forcé"),
        MediaStreamInfo(index: 3, kind: .subtitle, codec: "hdmv_pgs_subtitle", language: "eng"),
    ]

    @Test("a remux copies the streams (HEVC tagged hvc1) into HLS with fMP4 segments in the folder")
    func remux() {
        let plan = MediaPlan(action: .remux, family: "chromecast-ultra", reasons: [])
        let a = TranscodeArguments(input: "/m/movie.mkv", folder: "/tmp/t", plan: plan, streams: Self.streams).arguments
        #expect(a.contains("-c:v") && a[a.firstIndex(of: "-c:v")! + 1] == "copy")
        #expect(a[a.firstIndex(of: "-tag:v")! + 1] == "hvc1")
        #expect(a[a.firstIndex(of: "-c:a")! + 1] == "copy")
        #expect(a.suffix(1) == ["/tmp/t/index.m3u8"] && a.contains("fmp4") && a.contains("/tmp/t/seg%05d.m4s"))
        #expect(Array(a.prefix(3)) == ["-nostdin", "-hide_banner", "-loglevel"] && !a.contains("-ss"))
        #expect(a.filter { $0 == "-map" }.count == 2 && a.contains("0:0") && a.contains("0:1"), "subtitle streams are not mapped")
    }

    @Test("a transcode scales to the plan's height in H.264 High with a keyframe per segment; a start seeks the input")
    func transcode() {
        var plan = MediaPlan(action: .transcode, family: "chromecast", reasons: [])
        (plan.transcodeVideo, plan.targetHeight, plan.targetFPS) = (true, 1080, 24)
        var args = TranscodeArguments(input: "/m/movie.mkv", folder: "/tmp/t", plan: plan, streams: Self.streams)
        args.start = 42.5
        let a = args.arguments
        #expect(a[a.firstIndex(of: "-ss")! + 1] == "42.5" && a.firstIndex(of: "-ss")! < a.firstIndex(of: "-i")!)
        #expect(a[a.firstIndex(of: "-vf")! + 1] == "scale=-2:1080,fps=24,\(TranscodeArguments.toneMap),format=yuv420p",
                "the HDR10 source is tone-mapped to BT.709 after scaling")
        let sdr = [MediaStreamInfo(index: 0, kind: .video, codec: "vp9", width: 3840, height: 2160, transfer: "bt709")]
        let b = TranscodeArguments(input: "/m/clip.webm", folder: "/tmp/t", plan: plan, streams: sdr).arguments
        #expect(b[b.firstIndex(of: "-vf")! + 1] == "scale=-2:1080,fps=24,format=yuv420p", "an SDR source is only scaled")
        let hlg = [MediaStreamInfo(index: 0, kind: .video, codec: "hevc", width: 3840, height: 2160, transfer: "arib-std-b67")]
        #expect(TranscodeArguments(input: "/m/hlg.mkv", folder: "/tmp/t", plan: plan, streams: hlg).sourceIsHDR)
        #expect(a[a.firstIndex(of: "-c:v")! + 1] == "libx264" && a[a.firstIndex(of: "-profile:v")! + 1] == "high")
        #expect(a.contains("expr:gte(t,n_forced*2)") && a[a.firstIndex(of: "-color_trc")! + 1] == "bt709")
        #expect(a[a.firstIndex(of: "-c:a")! + 1] == "copy")
        let out = TranscodeArguments.outputVideo(VideoInfo(width: 3840, height: 2160, hdrType: .hdr), plan: plan)
        #expect(out == VideoInfo(width: 1920, height: 1080, hdrType: .sdr))
    }

    @Test("VA-API when a render node is given: upload and h264_vaapi; software() drops it again")
    func vaapi() {
        var plan = MediaPlan(action: .transcode, family: "chromecast", reasons: [])
        (plan.transcodeVideo, plan.targetHeight) = (true, 1080)
        var args = TranscodeArguments(input: "/m/movie.mkv", folder: "/tmp/t", plan: plan, streams: Self.streams)
        args.vaapiDevice = "/dev/dri/renderD128"
        let a = args.arguments
        #expect(a[a.firstIndex(of: "-vaapi_device")! + 1] == "/dev/dri/renderD128" && a.firstIndex(of: "-vaapi_device")! < a.firstIndex(of: "-i")!)
        #expect(a[a.firstIndex(of: "-vf")! + 1] == "scale=-2:1080,\(TranscodeArguments.toneMap),format=nv12,hwupload"
                && a[a.firstIndex(of: "-c:v")! + 1] == "h264_vaapi")
        let software = TranscodeArguments.software(args).arguments
        #expect(!software.contains("-vaapi_device") && software[software.firstIndex(of: "-c:v")! + 1] == "libx264")
    }

    @Test("auto: movie.srt and movie.<lang>.srt next to the file first, else the container's text streams (bitmap ones left out)")
    func findSubtitles() {
        let names = ["movie.mkv", "movie.srt", "movie.de.ass", "movie.en.forced.srt", "movie.nfo", "other.srt", "movie.mkv.srt"]
        let found = SubtitleTracks.find("auto", media: "/m/movie.mkv", streams: Self.streams, names: names)
        #expect(found == [.file(path: "/m/movie.de.ass", language: "de"), .file(path: "/m/movie.srt", language: nil)])
        #expect(found.map(\.name) == ["Deutsch", "movie.srt"])
        let embedded = SubtitleTracks.find("auto", media: "/m/movie.mkv", streams: Self.streams, names: ["movie.mkv"])
        #expect(embedded == [.embedded(index: 2, language: "fra", title: "Français forcé")])
        #expect(SubtitleTracks.find("/s/x.srt", media: "/m/movie.mkv", streams: []) == [.file(path: "/s/x.srt", language: nil)])
        let tracks = SubtitleTracks.tracks(embedded, urls: ["http://h/t/subtitles-1-fra.vtt"])
        #expect(tracks == [MediaTrack(trackID: 1, type: .text, trackContentID: "http://h/t/subtitles-1-fra.vtt", trackContentType: "text/vtt",
                                      subtype: .subtitles, language: "fra", name: "Français forcé")])
        let args = SubtitleTracks.conversionArguments(embedded[0], media: "/m/movie.mkv", output: "/o/s.vtt")
        #expect(Array(args.suffix(7)) == ["-i", "/m/movie.mkv", "-map", "0:2", "-f", "webvtt", "/o/s.vtt"])
    }
}
