import CastCore

/// What a receiver would make of a media fetch: whether the media loads and, if not, the
/// `detailedErrorCode` of its LOAD_FAILED.
///
/// The codes follow how a CAF receiver reports a load that fails before any media data:
/// - progressive media (MP4, WebM, MP3, …) plays in the browser's media element, which reports
///   every failure before the first data — no connection, an HTTP error, bytes it cannot
///   demux — as MEDIA_ERR_SRC_NOT_SUPPORTED: **104** MEDIA_SRC_NOT_SUPPORTED;
/// - an HLS manifest that cannot be fetched is **311** HLS_NETWORK_MASTER_PLAYLIST, one that is
///   not a playlist **411** HLS_MANIFEST_MASTER;
/// - a DASH manifest that cannot be fetched is **321** DASH_NETWORK, one that is not an MPD
///   **421** DASH_MANIFEST_NO_PERIODS.
/// No real receiver's answer for each case was captured; docs/simulator.md says so.
struct MediaCheckVerdict: Equatable, Sendable {
    /// nil: the media loads.
    var failure: DetailedErrorCode?
    /// What happened, for logs and the frame log (`connection refused`, `HTTP 404`, …).
    var reason: String
    /// `refused`, `timeout`, `http-status`, `not-media`, `ok`: the case, as a field.
    var kind: String

    enum Format: Equatable {
        case progressive
        case hls
        case dash

        /// From the LOAD's content type, else the URL's extension.
        init(contentType: String, url: String) {
            let type = contentType.lowercased()
            let path = url.lowercased().split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
            if type.contains("mpegurl") || path.hasSuffix(".m3u8") {
                self = .hls
            } else if type.contains("dash+xml") || path.hasSuffix(".mpd") {
                self = .dash
            } else {
                self = .progressive
            }
        }

        var networkFailure: DetailedErrorCode {
            switch self {
            case .progressive: return .mediaSrcNotSupported
            case .hls: return .hlsNetworkMasterPlaylist
            case .dash: return .dashNetwork
            }
        }

        var contentFailure: DetailedErrorCode {
            switch self {
            case .progressive: return .mediaSrcNotSupported
            case .hls: return .hlsManifestMaster
            case .dash: return .dashManifestNoPeriods
            }
        }
    }

    static func judge(_ result: MediaFetchResult, contentType: String) -> MediaCheckVerdict {
        let format = Format(contentType: contentType, url: result.url)
        guard let status = result.status else {
            let error = result.error ?? "no response"
            let kind = error.hasPrefix("timed out") ? "timeout" : "refused"
            return MediaCheckVerdict(failure: format.networkFailure, reason: error, kind: kind)
        }
        guard (200..<300).contains(status) else {
            return MediaCheckVerdict(failure: format.networkFailure, reason: "HTTP \(status)", kind: "http-status")
        }
        guard let recognised = Self.recognise(result.prefix, format: format) else {
            let what = result.prefix.isEmpty ? "an empty body" : "bytes that are not \(format == .progressive ? "media" : "a manifest")"
            let timedOut = result.error.map { " (\($0))" } ?? ""
            return MediaCheckVerdict(failure: format.contentFailure, reason: "HTTP \(status) with \(what)\(timedOut)", kind: "not-media")
        }
        return MediaCheckVerdict(failure: nil, reason: "HTTP \(status), \(recognised)", kind: "ok")
    }

    /// The container or manifest the first bytes announce; nil when none of those a receiver plays.
    static func recognise(_ bytes: [UInt8], format: Format) -> String? {
        func at(_ offset: Int, _ magic: [UInt8]) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<(offset + magic.count)]) == magic
        }
        var text = bytes
        if at(0, [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        let leading = String(decoding: text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.prefix(512), as: UTF8.self)
        switch format {
        case .hls: return leading.hasPrefix("#EXTM3U") ? "HLS playlist" : nil
        case .dash: return leading.contains("<MPD") ? "DASH manifest" : nil
        case .progressive: break
        }
        if at(4, Array("ftyp".utf8)) { return "MP4" }
        if at(0, [0x1A, 0x45, 0xDF, 0xA3]) { return "Matroska/WebM" }
        if at(0, Array("ID3".utf8)) { return "MP3 (ID3)" }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return "AAC (ADTS)" }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return "MPEG audio" }
        if at(0, Array("OggS".utf8)) { return "Ogg" }
        if at(0, Array("fLaC".utf8)) { return "FLAC" }
        if at(0, Array("RIFF".utf8)), at(8, Array("WAVE".utf8)) { return "WAV" }
        if at(0, Array("RIFF".utf8)), at(8, Array("WEBP".utf8)) { return "WebP" }
        if at(0, [0xFF, 0xD8, 0xFF]) { return "JPEG" }
        if at(0, [0x89, 0x50, 0x4E, 0x47]) { return "PNG" }
        if at(0, Array("GIF8".utf8)) { return "GIF" }
        // MPEG-TS: 188-byte packets, each starting with the sync byte 0x47.
        if at(0, [0x47]), bytes.count > 188, bytes[188] == 0x47 { return "MPEG-TS" }
        // A manifest sent without its content type plays too (the receiver sniffs it).
        if leading.hasPrefix("#EXTM3U") { return "HLS playlist" }
        if leading.contains("<MPD") { return "DASH manifest" }
        return nil
    }
}
