@testable import CastReceiverSimServer
import CastCore
import Testing

@Suite("The simulator judging media and text tracks as its model")
struct MediaStreamJudgeTests {
    /// ffprobe's answer for a 4K HDR10 HEVC MKV, trimmed to the keys that count.
    static let ffprobe = """
        {"streams":[{"index":0,"codec_name":"hevc","profile":"Main 10","codec_type":"video","width":3840,"height":2160,
        "pix_fmt":"yuv420p10le","level":150,"color_transfer":"smpte2084","avg_frame_rate":"24000/1001","disposition":{"default":1}},
        {"index":1,"codec_name":"aac","profile":"LC","codec_type":"audio","sample_rate":"48000","channels":2,"tags":{"language":"eng"}}],
        "format":{"format_name":"matroska,webm","duration":"1.000000"}}
        """

    @Test("ffprobe's JSON becomes castline's streams; the model's row decides; videoInfo comes from the streams")
    func judge() throws {
        let format = MediaStreamJudge.format(fromFFprobe: try JSONValue.parse(Self.ffprobe))
        #expect(format.container == "matroska,webm" && format.duration == 1)
        #expect(format.streams[0].summary == "video 0: hevc Main 10 3840x2160 23.98 fps 10-bit HDR10")
        #expect(format.streams[1].language == "eng" && format.streams[1].sampleRate == 48000)
        let table = DeviceCapabilityTable.shared
        let ultra = MediaStreamJudge.verdict(format, contentType: "video/x-matroska", family: table.family(id: "chromecast-ultra")!)
        #expect(ultra.failure == nil && ultra.videoInfo == VideoInfo(width: 3840, height: 2160, hdrType: .hdr))
        let gen3 = MediaStreamJudge.verdict(format, contentType: "video/x-matroska", family: table.family(id: "chromecast")!)
        #expect(gen3.failure == .mediaSrcNotSupported && gen3.reason.contains("hevc") && gen3.videoInfo == nil)
        let hls = MediaStreamJudge.verdict(format, contentType: "application/x-mpegURL", family: table.family(id: "speaker")!)
        #expect(hls.failure == .sourceBufferFailure && hls.reason.contains("audio only"))
    }

    @Test("an 8-bit WAV plays, and the verdict says the sources are silent on it")
    func eightBitWAV() throws {
        let ffprobe = """
            {"streams":[{"index":0,"codec_name":"pcm_u8","codec_type":"audio","sample_rate":"22050","channels":1}],
            "format":{"format_name":"wav","duration":"2.000000"}}
            """
        let format = MediaStreamJudge.format(fromFFprobe: try JSONValue.parse(ffprobe))
        let verdict = MediaStreamJudge.verdict(format, contentType: "audio/wav", family: DeviceCapabilityTable.shared.family(id: "speaker")!)
        #expect(verdict.failure == nil && verdict.duration == 2)
        #expect(verdict.reason.contains("pcm_u8: silent"), "\(verdict.reason)")
    }

    @Test("a text track must answer 2xx, with CORS, in WebVTT")
    func textTracks() {
        func result(status: Int?, cors: String?, body: String) -> MediaFetchResult {
            var r = MediaFetchResult(url: "http://127.0.0.1:1/s.vtt", status: status, bytes: body.utf8.count)
            r.allowOrigin = cors
            r.prefix = Array(body.utf8)
            return r
        }
        #expect(TextTrackCheck.judge(result(status: 206, cors: "*", body: "\u{FEFF}WEBVTT\n\n00:00.500 --> 00:01.500\nHi")).problem == nil)
        #expect(TextTrackCheck.judge(result(status: 200, cors: nil, body: "WEBVTT\n")).problem?.contains("Access-Control-Allow-Origin") == true)
        #expect(TextTrackCheck.judge(result(status: 200, cors: "*", body: "1\n00:00:00,500 --> 00:00:01,500\nHi")).problem?.contains("not WebVTT") == true)
        #expect(TextTrackCheck.judge(result(status: 200, cors: "*", body: "WEBVTTX")).isWebVTT == false)
        #expect(TextTrackCheck.judge(result(status: 404, cors: "*", body: "")).problem?.contains("HTTP 404") == true)
    }
}
