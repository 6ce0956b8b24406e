@testable import CastReceiverSimServer
import CastCore
import Testing

/// How a fetch result is judged: which first bytes count as media, which code each failure gets.
@Suite("Media check verdict")
struct MediaCheckVerdictTests {
    static func result(status: Int?, body: [UInt8] = [], error: String? = nil, url: String = "http://127.0.0.1/a") -> MediaFetchResult {
        var result = MediaFetchResult(url: url, status: status, bytes: body.count, error: error)
        result.prefix = body
        return result
    }

    static let samples: [(bytes: [UInt8], name: String)] = {
        let mp4: [UInt8] = [0, 0, 0, 0x20] + Array("ftypisom".utf8)
        let wav: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8)
        let id3: [UInt8] = Array("ID3".utf8) + [4, 0]
        let hls: [UInt8] = Array("\u{FEFF}#EXTM3U\n".utf8)
        let ts: [UInt8] = [0x47, 0x40, 0x00] + [UInt8](repeating: 0xFF, count: 185) + [0x47, 0x00]
        return [
            (mp4, "MP4"), ([0x1A, 0x45, 0xDF, 0xA3, 0x01], "Matroska/WebM"), (id3, "MP3 (ID3)"),
            ([0xFF, 0xFB, 0x90, 0x00], "MPEG audio"), ([0xFF, 0xF1, 0x50, 0x80], "AAC (ADTS)"), (Array("OggS".utf8), "Ogg"),
            (Array("fLaC".utf8), "FLAC"), (wav, "WAV"), ([0xFF, 0xD8, 0xFF, 0xE0], "JPEG"), ([0x89, 0x50, 0x4E, 0x47, 0x0D], "PNG"),
            (Array("GIF89a".utf8), "GIF"), (ts, "MPEG-TS"), (hls, "HLS playlist"),
        ]
    }()

    @Test("containers a receiver plays are recognised from their first bytes", arguments: 0..<13)
    func recognised(index: Int) {
        let sample = Self.samples[index]
        #expect(MediaCheckVerdict.recognise(sample.bytes, format: .progressive) == sample.name)
    }

    @Test("text, HTML, JSON, zeros and nothing are not media")
    func notMedia() {
        for body in ["<!doctype html>", "{\"error\":1}", "hello", ""].map({ Array($0.utf8) }) + [[0, 0, 0, 0, 0, 0, 0, 0, 0]] {
            #expect(MediaCheckVerdict.recognise(body, format: .progressive) == nil, "\(body)")
        }
    }

    @Test("codes: progressive 104 for every failure; HLS 311 / 411, DASH 321 / 421; success carries no code")
    func codes() {
        let refused = Self.result(status: nil, error: "cannot connect to 127.0.0.1:1: connection refused")
        #expect(MediaCheckVerdict.judge(refused, contentType: "video/mp4") ==
                MediaCheckVerdict(failure: .mediaSrcNotSupported, reason: refused.error!, kind: "refused"))
        #expect(MediaCheckVerdict.judge(Self.result(status: nil, error: "timed out after 5.0 s"), contentType: "video/mp4").kind == "timeout")
        #expect(MediaCheckVerdict.judge(Self.result(status: 404), contentType: "video/mp4").failure == .mediaSrcNotSupported)
        #expect(MediaCheckVerdict.judge(Self.result(status: 404, url: "http://127.0.0.1/x.m3u8"), contentType: "").failure == .hlsNetworkMasterPlaylist)
        #expect(MediaCheckVerdict.judge(Self.result(status: 200, body: Array("<html>".utf8)), contentType: "application/vnd.apple.mpegurl").failure
                == .hlsManifestMaster)
        #expect(MediaCheckVerdict.judge(Self.result(status: 502), contentType: "application/dash+xml").failure == .dashNetwork)
        #expect(MediaCheckVerdict.judge(Self.result(status: 200, body: Array("<?xml?><html/>".utf8), url: "http://127.0.0.1/m.mpd?t=1"),
                                        contentType: "").failure == .dashManifestNoPeriods)
        let dash = MediaCheckVerdict.judge(Self.result(status: 200, body: Array("<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn\">".utf8)),
                                           contentType: "application/dash+xml")
        #expect(dash.failure == nil && dash.kind == "ok")
        let mp4 = MediaCheckVerdict.judge(Self.result(status: 206, body: [0, 0, 0, 0x18] + Array("ftypmp42".utf8)), contentType: "video/mp4")
        #expect(mp4 == MediaCheckVerdict(failure: nil, reason: "HTTP 206, MP4", kind: "ok"))
    }
}
