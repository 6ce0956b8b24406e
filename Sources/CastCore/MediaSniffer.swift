/// Recognises the media containers Cast devices play from a file's first bytes, the way
/// `file(1)` recognises them by magic numbers: what castline checks before it serves a local
/// file, so that text, keys and files of no known media type are never handed out, whatever
/// content type a client claimed. Pure; `Sendable`.
package enum MediaSniffer {
    /// The container `head` starts like (`mp4`, `webm`, `mp3`, `wav`, `hls`, …), nil when it is
    /// none that a Cast device plays.
    package static func container(of head: [UInt8]) -> String? {
        let b = head
        func at(_ offset: Int, _ bytes: [UInt8]) -> Bool {
            b.count >= offset + bytes.count && Array(b[offset..<offset + bytes.count]) == bytes
        }
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
        // ISO base media (MP4, M4A, MOV, 3GP, HEIF/AVIF images): a box size, then "ftyp".
        if at(4, ascii("ftyp")) { return "mp4" }
        // A fragmented MP4 segment or a file that starts with another top-level box.
        if at(4, ascii("moov")) || at(4, ascii("styp")) || at(4, ascii("moof")) { return "mp4" }
        if at(0, [0x1A, 0x45, 0xDF, 0xA3]) { return "webm" }                       // EBML: WebM, Matroska
        if at(0, ascii("ID3")) { return "mp3" }                                   // an ID3v2 tag (MP3, AAC)
        if at(0, ascii("fLaC")) { return "flac" }
        if at(0, ascii("OggS")) { return "ogg" }
        if at(0, ascii("RIFF")), at(8, ascii("WAVE")) { return "wav" }
        if at(0, ascii("RIFF")), at(8, ascii("WEBP")) { return "webp" }
        if at(0, [0xFF, 0xD8, 0xFF]) { return "jpeg" }
        if at(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if at(0, ascii("GIF87a")) || at(0, ascii("GIF89a")) { return "gif" }
        if at(0, [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return nil }  // ASF/WMA: no Cast device plays it
        if isTransportStream(b) { return "mpegts" }
        if b.count >= 2, b[0] == 0xFF, b[1] & 0xF6 == 0xF0 { return "aac" }        // ADTS
        if b.count >= 3, b[0] == 0xFF, b[1] & 0xE0 == 0xE0, b[1] & 0x18 != 0x08, b[1] & 0x06 != 0, b[2] & 0xF0 != 0xF0 { return "mp3" }
        // Text formats Cast plays: an HLS playlist, a DASH manifest, WebVTT subtitles.
        let text = String(decoding: b.prefix(512).drop(while: { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }), as: UTF8.self)
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        if trimmed.hasPrefix("#EXTM3U") { return "hls" }
        if trimmed.hasPrefix("WEBVTT") { return "vtt" }
        if trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<MPD"), trimmed.contains("<MPD") { return "dash" }
        return nil
    }

    /// MPEG-TS: sync bytes 0x47 every 188 bytes (three in a row; one for a shorter file).
    private static func isTransportStream(_ b: [UInt8]) -> Bool {
        guard let first = b.first, first == 0x47 else { return false }
        let packets = min(3, b.count / 188)
        guard packets >= 1 else { return false }
        return (0..<packets).allSatisfy { b[$0 * 188] == 0x47 }
    }
}
