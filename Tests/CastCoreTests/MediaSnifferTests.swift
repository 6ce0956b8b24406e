@testable import CastCore
import Testing

/// What castline recognises as media before it serves a file: magic numbers of the containers
/// Cast plays; text, keys and unknown bytes are none.
@Suite struct MediaSnifferTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("containers Cast devices play are recognised by their first bytes", arguments: [
        ([0, 0, 0, 0x18] + bytes("ftypmp42") + [0, 0], "mp4"),
        ([0x1A, 0x45, 0xDF, 0xA3, 0x9F], "webm"),
        (bytes("ID3\u{4}\0\0"), "mp3"),
        ([0xFF, 0xFB, 0x90, 0x64], "mp3"),
        ([0xFF, 0xF1, 0x50, 0x80], "aac"),
        (bytes("fLaC\0\0\0\u{22}"), "flac"),
        (bytes("OggS\0\u{2}"), "ogg"),
        (bytes("RIFF\u{24}\0\0\0WAVEfmt "), "wav"),
        (bytes("RIFF\u{24}\0\0\0WEBPVP8 "), "webp"),
        ([0xFF, 0xD8, 0xFF, 0xE0], "jpeg"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "png"),
        (bytes("GIF89a"), "gif"),
        (bytes("\u{FEFF}#EXTM3U\n#EXT-X-VERSION:3\n"), "hls"),
        (bytes("WEBVTT\n\n00:00.000 --> 00:01.000\n"), "vtt"),
        (bytes("<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">"), "dash"),
    ] as [([UInt8], String)])
    func known(_ head: [UInt8], _ container: String) {
        #expect(MediaSniffer.container(of: head) == container)
    }

    @Test("a transport stream: sync bytes every 188")
    func transportStream() {
        var packets = [UInt8](repeating: 0xAA, count: 188 * 3)
        for i in 0..<3 { packets[i * 188] = 0x47 }
        #expect(MediaSniffer.container(of: packets) == "mpegts")
        packets[188] = 0
        #expect(MediaSniffer.container(of: packets) == nil)
    }

    @Test("text, keys, shadow files, ELF binaries and empty files are not media", arguments: [
        bytes("root:$y$j9T$abc:19000:0:99999:7:::\n"),
        bytes("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"),
        bytes("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"),
        bytes("castline-api-token-0123456789abcdef\n"),
        bytes("<html><body>a page</body></html>"),
        [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0],
        [],
        [0xFF],
    ] as [[UInt8]])
    func notMedia(_ head: [UInt8]) {
        #expect(MediaSniffer.container(of: head) == nil)
    }
}
