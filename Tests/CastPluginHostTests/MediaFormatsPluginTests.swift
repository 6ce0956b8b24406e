import CastCore
import CastPluginHost
import CastTestSupport
import Foundation
import Testing

/// The MediaFormats plugin through the real loader, over the manifests in Tests/Fixtures/media-formats.
@Suite struct MediaFormatsPluginTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/media-formats").path

    static func host() throws -> PluginHostRig {
        let rig = try PluginHostRig(paths: [BuiltProducts.library("CastlinePluginMediaFormats")])
        rig.host.loadAll()
        #expect(rig.host.features(of: .mediaFormat).map(\.qualifiedName) == ["media-formats/manifest"])
        return rig
    }

    func probe(_ fixture: String, url: Bool = true) throws -> MediaFormatInfo {
        let path = Self.fixtures + "/" + fixture
        let body = try #require(FileManager.default.contents(atPath: path))
        return try Self.host().host.probeMediaFormat(url: url ? path : nil, contentType: nil, body: Array(body)).get()
    }

    struct Expected: Sendable, CustomTestStringConvertible {
        var fixture: String
        var contentType: String
        var streamType: StreamType?
        var size: (Int, Int)?
        var hdr: HDRType?
        var format: String?
        var codecs: [String]
        var variant: String?
        var testDescription: String { fixture }
    }

    static let hls = "application/x-mpegURL", dash = "application/dash+xml"
    static let cases: [Expected] = [
        Expected(fixture: "hls-master-4k-pq.m3u8", contentType: hls, streamType: nil, size: (3840, 2160), hdr: .hdr, format: "HDR10",
                 codecs: ["hvc1.2.4.L153.B0"], variant: "hdr10_2160p/index.m3u8"),
        Expected(fixture: "hls-master-hlg.m3u8", contentType: hls, streamType: nil, size: (3840, 2160), hdr: .hdr, format: "HLG",
                 codecs: ["hvc1.2.4.L153.B0"], variant: "hlg/2160p50.m3u8"),
        Expected(fixture: "hls-master-dolby-vision.m3u8", contentType: hls, streamType: nil, size: (3840, 2160), hdr: .dolbyVision,
                 format: "DolbyVision", codecs: ["hvc1.2.4.L153.B0", "dvh1.08.07"], variant: "dolby_vision/2160p/index.m3u8"),
        Expected(fixture: "hls-master-sdr-1080.m3u8", contentType: hls, streamType: nil, size: (1920, 1080), hdr: .sdr, format: "SDR",
                 codecs: ["avc1.640028"], variant: "https://cdn.example.com/vod/movie/1080p.m3u8?token=abc,def"),
        Expected(fixture: "hls-media-vod.m3u8", contentType: hls, streamType: .buffered, codecs: []),
        Expected(fixture: "hls-media-live.m3u8", contentType: hls, streamType: .live, codecs: []),
        Expected(fixture: "hls-media-event.m3u8", contentType: hls, streamType: .live, codecs: []),
        Expected(fixture: "dash-static-4k-hdr10.mpd", contentType: dash, streamType: .buffered, size: (3840, 2160), hdr: .hdr,
                 format: "HDR10", codecs: ["hev1.2.4.L153.B0"]),
        Expected(fixture: "dash-dynamic-hlg.mpd", contentType: dash, streamType: .live, size: (3840, 2160), hdr: .hdr, format: "HLG",
                 codecs: ["hvc1.2.4.L153.B0"]),
        Expected(fixture: "dash-static-sdr-1080.mpd", contentType: dash, streamType: .buffered, size: (1920, 1080), hdr: .sdr,
                 format: "SDR", codecs: ["avc1.640028"]),
        Expected(fixture: "dash-av1-10bit.mpd", contentType: dash, streamType: .buffered, size: (3840, 2160), hdr: nil, format: nil,
                 codecs: ["av01.0.12M.10"]),
        Expected(fixture: "dash-truncated.mpd", contentType: dash, streamType: .buffered, size: (1280, 720), hdr: .sdr, format: "SDR",
                 codecs: ["avc1.64001f"]),
    ]

    @Test(arguments: cases) func manifest(_ e: Expected) throws {
        for byURL in [true, false] {
            let info = try probe(e.fixture, url: byURL)
            #expect(info.contentType == e.contentType, "by url: \(byURL)")
            #expect(info.streamType == e.streamType)
            #expect(info.videoInfo.map { [$0.width, $0.height] } == e.size.map { [$0.0, $0.1] })
            #expect(info.hdrType == e.hdr)
            #expect(info.videoInfo?.hdrType == (e.size == nil ? nil : e.hdr))
            #expect(info.hdrFormat == e.format)
            #expect(info.videoCodecs == e.codecs)
            #expect(info.variantURI == e.variant)
            #expect(!info.notes.isEmpty)
            if !byURL { #expect(info.notes.contains { $0.contains("sniffed") }) }
        }
    }

    @Test func badgesForTheStatusView() throws {
        #expect(try probe("hls-master-4k-pq.m3u8").videoInfo?.badge == "4K HDR")
        #expect(try probe("hls-master-dolby-vision.m3u8").videoInfo?.badge == "4K DV")
        #expect(try probe("dash-static-sdr-1080.mpd").videoInfo?.badge == "1080p SDR")
        #expect(try probe("hls-master-4k-pq.m3u8").videoInfo?.is4K == true)
        #expect(try probe("dash-static-sdr-1080.mpd").videoInfo?.isHDR == false)
    }

    @Test func notAPlaylistGivesNoStreamTypeAndSaysWhy() throws {
        let info = try probe("hls-not-a-playlist.m3u8")
        #expect(info.contentType == Self.hls)
        #expect(info.streamType == nil)
        #expect(info.videoInfo == nil)
        #expect(info.notes.contains { $0.contains("not an HLS playlist") && $0.contains("#EXTM3U") })
    }

    @Test func masterThenVariantGivesTheWholePicture() throws {
        let rig = try Self.host()
        let master = try probe("hls-master-4k-pq.m3u8")
        let variant = try rig.host.probeMediaFormat(url: master.variantURI, contentType: master.contentType,
            body: Array(try #require(FileManager.default.contents(atPath: Self.fixtures + "/hls-media-vod.m3u8")))).get()
        let merged = master.merging(variant)
        #expect(merged.streamType == .buffered)
        #expect(merged.videoInfo == VideoInfo(width: 3840, height: 2160, hdrType: .hdr))
    }

    @Test func contentTypesFromFileNamesAndURLs() throws {
        let rig = try Self.host()
        let table: [(String, String)] = [
            ("/media/movie.mp4", "video/mp4"), ("https://example.com/a/b/stream.m3u8?token=1#t=3", "application/x-mpegURL"),
            ("https://example.com/live.mpd", "application/dash+xml"), ("song.MP3", "audio/mpeg"), ("clip.webm", "video/webm"),
            ("photo.jpeg", "image/jpeg"), ("track.flac", "audio/flac"),
        ]
        for (url, type) in table {
            #expect(try rig.host.probeMediaFormat(url: url, contentType: nil).get().contentType == type, "\(url)")
        }
    }

    /// Codec strings (one per line: codec, family, hint) through the content type's codecs parameter.
    @Test func codecStrings() throws {
        let rig = try Self.host()
        let text = try String(contentsOfFile: Self.fixtures + "/codec-strings.txt", encoding: .utf8)
        var checked = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t").map(String.init)
            guard parts.count == 3 else { continue }
            let info = try rig.host.probeMediaFormat(url: nil, contentType: "video/mp4; codecs=\"\(parts[0])\"").get()
            switch parts[2] {
            case "dolbyVision": #expect(info.hdrType == .dolbyVision && info.hdrFormat == "DolbyVision", "\(parts[0])")
            case "pq": #expect(info.hdrType == .hdr && info.hdrFormat == "HDR10", "\(parts[0])")
            case "hlg": #expect(info.hdrType == .hdr && info.hdrFormat == "HLG", "\(parts[0])")
            case "sdr": #expect(info.hdrType == .sdr, "\(parts[0]): \(info)")
            case "10bit": #expect(info.hdrType == nil && info.notes.contains { $0.contains("10-bit") }, "\(parts[0]): \(info.notes)")
            default: #expect(info.hdrType == nil && info.videoCodecs.isEmpty, "\(parts[0]): \(info)")
            }
            checked += 1
        }
        #expect(checked == 21)
    }
}
