@testable import CastCore
import Testing

@Suite("MediaPlan and the device capability table")
struct MediaPlanTests {
    static let table = DeviceCapabilityTable.shared

    static func format(container: String, _ streams: [MediaStreamInfo]) -> MediaFormatInfo {
        var f = MediaFormatInfo()
        f.container = container
        f.streams = streams
        return f
    }

    static let hevcHDR10 = MediaStreamInfo(index: 0, kind: .video, codec: "hevc", profile: "Main 10", level: 150, width: 3840, height: 2160,
                                           frameRate: 24, bitDepth: 10, transfer: "smpte2084", hdrFormat: "HDR10")
    static let aac = MediaStreamInfo(index: 1, kind: .audio, codec: "aac", profile: "LC", channels: 2, sampleRate: 48000)
    static let h264 = MediaStreamInfo(index: 0, kind: .video, codec: "h264", profile: "High", level: 40, width: 1920, height: 1080,
                                      frameRate: 30, bitDepth: 8, hdrFormat: "SDR")

    @Test("the embedded table is the JSON file, byte for byte (run scripts/generate-device-capabilities.sh after editing it)")
    func embeddedMatchesFile() throws {
        let path = String(#filePath.split(separator: "/").dropLast(3).joined(separator: "/"))
        let file = try #require(try SmallFile.read(path: "/" + path + "/Sources/CastCore/Resources/device-capabilities.json", limit: 1 << 20))
        #expect(String(decoding: file, as: UTF8.self) == DeviceCapabilityTable.embeddedJSON + "\n")
    }

    @Test("rows: by model name (exact, then any case), else by the ca video bit")
    func familySelection() {
        #expect(Self.table.family(model: "Chromecast Ultra", videoOut: true).id == "chromecast-ultra")
        #expect(Self.table.family(model: "chromecast with google tv", videoOut: nil).id == "chromecast-google-tv")
        #expect(Self.table.family(model: "Google Nest Mini", videoOut: nil).id == "speaker")
        #expect(Self.table.family(model: "Some TV", videoOut: false).id == "speaker")
        #expect(Self.table.family(model: "Some TV", videoOut: nil).id == "chromecast")
    }

    @Test("4K HDR10 HEVC in MKV: remux on a 4K HDR model, transcode to 1080p H.264 on a 1080p one, refused on a speaker")
    func hdr10Decisions() {
        let mkv = Self.format(container: "matroska,webm", [Self.hevcHDR10, Self.aac])
        let ultra = MediaPlan.decide(mkv, family: Self.table.family(id: "chromecast-ultra")!)
        #expect(ultra.action == .remux && !ultra.transcodeVideo && !ultra.transcodeAudio)
        let gen3 = MediaPlan.decide(mkv, family: Self.table.family(id: "chromecast")!)
        #expect(gen3.action == .transcode && gen3.transcodeVideo && !gen3.transcodeAudio && gen3.targetHeight == 1080)
        #expect(gen3.reasons.contains { $0.contains("does not decode hevc") })
        let speaker = MediaPlan.decide(mkv, family: Self.table.family(id: "speaker")!)
        #expect(speaker.action == .refuse && speaker.reasons.first?.contains("audio only") == true)
    }

    @Test("limits one by one: HDR without HDR support, level, frame rate, size, audio codec, container")
    func limits() {
        let cc = Self.table.family(id: "chromecast")!
        #expect(MediaPlan.decide(Self.format(container: "mov,mp4,m4a,3gp,3g2,mj2", [Self.h264, Self.aac]), family: cc).action == .direct)
        var pq = Self.h264
        pq.hdrFormat = "HLG"
        #expect(MediaPlan.decide(Self.format(container: "mp4", [pq]), family: cc).reasons == ["Chromecast (3rd generation) cannot show HLG"])
        var high = Self.h264
        high.level = 51
        #expect(MediaPlan.decide(Self.format(container: "mp4", [high]), family: cc).action == .transcode)
        var fast = Self.h264
        fast.frameRate = 120
        #expect(MediaPlan.decide(Self.format(container: "mp4", [fast]), family: cc).targetFPS == 60)
        var portrait = Self.h264
        (portrait.width, portrait.height) = (1080, 1920)
        #expect(MediaPlan.decide(Self.format(container: "mp4", [portrait]), family: cc).action == .direct, "portrait 1080x1920 fits 1920x1080")
        let ac3 = MediaStreamInfo(index: 1, kind: .audio, codec: "ac3", channels: 6)
        let audioOnly = MediaPlan.decide(Self.format(container: "mp4", [Self.h264, ac3]), family: cc)
        #expect(audioOnly.action == .transcode && audioOnly.transcodeAudio && !audioOnly.transcodeVideo)
        #expect(MediaPlan.decide(Self.format(container: "matroska,webm", [Self.h264, Self.aac]), family: cc).action == .remux)
        let flac = MediaStreamInfo(index: 0, kind: .audio, codec: "flac", sampleRate: 44100)
        #expect(MediaPlan.decide(Self.format(container: "flac", [flac]), family: Self.table.family(id: "speaker")!).action == .direct)
        #expect(MediaPlan.decide(Self.format(container: "mp4", []), family: cc).action == .refuse)
    }

    /// Issue 47: every rule cites its source; where the sources are silent the rule accepts the
    /// media and says so (8-bit WAV was refused with no source for it).
    @Test func everyRuleCitesItsSourceAndSilentOnesAccept() {
        for codec in Self.table.audioCodecs { #expect(!codec.source.isEmpty, "audio rule \(codec.codec) has no source") }
        for family in Self.table.families { #expect(!family.source.isEmpty, "family \(family.id) has no source") }
        let speaker = Self.table.family(id: "speaker")!
        for depth in ["pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le"] {
            let wav = MediaStreamInfo(index: 0, kind: .audio, codec: depth, channels: 2, sampleRate: 44100)
            #expect(MediaPlan.decide(Self.format(container: "wav", [wav]), family: speaker).action == .direct, "\(depth) WAV is LPCM")
        }
        #expect(Self.table.audioCodecs.first { $0.codec == "pcm_u8" }?.isAcceptedWithoutSource == true)
        #expect(Self.table.audioCodecs.first { $0.codec == "pcm_s16le" }?.isAcceptedWithoutSource == false)
        let ac3 = MediaStreamInfo(index: 0, kind: .audio, codec: "ac3", channels: 6)
        #expect(MediaPlan.decide(Self.format(container: "mp4", [ac3]), family: speaker).action != .direct,
                "a codec the sources do not list is still refused or transcoded")
    }

    @Test("stream JSON round-trips with snake_case keys; a stream without a codec is an error")
    func streamJSON() throws {
        let decoded = try MediaStreamInfo(json: Self.hevcHDR10.json)
        #expect(decoded == Self.hevcHDR10)
        #expect(throws: CastPayloadError.self) { try MediaStreamInfo(json: ["kind": "video"]) }
        #expect(Self.hevcHDR10.summary == "video 0: hevc Main 10 3840x2160 24 fps 10-bit HDR10")
    }
}
