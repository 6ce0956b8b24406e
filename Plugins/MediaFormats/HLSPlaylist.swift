// HLS playlists (RFC 8216 and its draft successor): master variants and media-playlist
// liveness. Tolerant of CRLF / CR line ends, a UTF-8 BOM, blank lines, comments, lowercase tag
// names and quoted attribute values that contain commas. Pure stdlib: no Foundation.

/// Why a body is not an HLS playlist.
enum HLSParseError: Error, Equatable, Sendable {
    /// The first non-blank line is not `#EXTM3U` (the line is given, cut to 80 characters).
    case missingHeader(firstLine: String)
    /// The body is empty or only whitespace.
    case empty

    var message: String {
        switch self {
        case .empty: return "not an HLS playlist: empty body"
        case .missingHeader(let line): return "not an HLS playlist: first line is \"\(line)\", not #EXTM3U"
        }
    }
}

/// One `#EXT-X-STREAM-INF` entry of a master playlist, with the URI line that follows it.
struct HLSVariant: Equatable, Sendable {
    var uri: String
    var bandwidth: Int?
    var width: Int?
    var height: Int?
    /// CODECS entries, split and trimmed.
    var codecs: [String]
    /// SUPPLEMENTAL-CODECS entries as written, brands included (`dvh1.08.07/db4h`).
    var supplementalCodecs: [String]
    /// VIDEO-RANGE uppercased (`SDR`, `PQ`, `HLG`), nil when absent.
    var videoRange: String?

    /// width × height (saturating), 0 when RESOLUTION is absent or malformed.
    var pixelCount: Int { MediaFormatAnalyzer.pixels(width, height) }
}

/// A parsed HLS playlist: either a master playlist (variants) or a media playlist (segments).
struct HLSPlaylist: Equatable, Sendable {
    enum Kind: String, Sendable { case master, media }

    var kind: Kind
    /// Master playlist variants in file order (I-frame variants are not included).
    var variants: [HLSVariant] = []
    var hasEndList = false
    /// `#EXT-X-PLAYLIST-TYPE` uppercased (`VOD`, `EVENT`), nil when absent.
    var playlistType: String?
    /// Number of `#EXTINF` tags.
    var segmentCount = 0
    var mediaSequence: Int?
    var targetDuration: Int?
    /// Oddities met while parsing (a STREAM-INF without URI, mixed master and media tags).
    var warnings: [String] = []

    /// Media playlists: `BUFFERED` when `#EXT-X-ENDLIST` is present or the type is VOD, `LIVE`
    /// when segments (or a target duration) come without ENDLIST (EVENT included); nil for a
    /// master playlist and for a playlist with neither segments nor media tags.
    var streamType: String? {
        guard kind == .media else { return nil }
        if hasEndList || playlistType == "VOD" { return "BUFFERED" }
        if segmentCount > 0 || playlistType == "EVENT" || targetDuration != nil || mediaSequence != nil {
            return "LIVE"
        }
        return nil
    }

    /// One-line explanation of `streamType`, for report notes.
    var streamTypeReason: String {
        if hasEndList { return "#EXT-X-ENDLIST present" }
        if playlistType == "VOD" { return "#EXT-X-PLAYLIST-TYPE:VOD" }
        if playlistType == "EVENT" { return "#EXT-X-PLAYLIST-TYPE:EVENT without #EXT-X-ENDLIST" }
        if streamType == "LIVE" { return "no #EXT-X-ENDLIST (\(segmentCount) segments)" }
        return "media playlist has neither segments nor #EXT-X-ENDLIST"
    }

    init(kind: Kind) { self.kind = kind }

    /// Parses playlist text.
    static func parse(_ text: String) throws(HLSParseError) -> HLSPlaylist {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses playlist bytes (UTF-8; invalid sequences are replaced, not rejected).
    static func parse<C: Collection>(bytes: C) throws(HLSParseError) -> HLSPlaylist where C.Element == UInt8 {
        var lines = splitLines(Array(bytes))
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let header = lines.first else { throw .empty }
        guard header.uppercased().hasPrefix("#EXTM3U") else {
            let shown = header.count > 80 ? String(header.prefix(80)) + "…" : header
            throw .missingHeader(firstLine: shown)
        }
        var playlist = HLSPlaylist(kind: .media)
        var pending: HLSVariant?
        var sawMediaTag = false
        var sawStreamInf = false
        for line in lines.dropFirst() where !line.isEmpty {
            guard line.hasPrefix("#") else {
                if var variant = pending {
                    variant.uri = line
                    playlist.variants.append(variant)
                    pending = nil
                }
                continue  // a segment URI, or a stray line
            }
            guard line.utf8.count > 4, line.utf8.prefix(4).map({ $0 & 0xDF }) == [0x03, 0x45, 0x58, 0x54] else {
                continue  // a comment ("#" & 0xDF == 0x03; "EXT" in any case)
            }
            let colon = line.utf8.firstIndex(of: 0x3A)
            let tag = String(line[..<(colon ?? line.endIndex)]).uppercased()
            let value = colon.map { String(line[line.index(after: $0)...]).trimmedWhitespace } ?? ""
            switch tag {
            case "#EXT-X-STREAM-INF":
                if let orphan = pending { playlist.warnings.append(missingURI(orphan)) }
                pending = variant(from: attributes(value))
                sawStreamInf = true
            case "#EXTINF":
                playlist.segmentCount += 1
                sawMediaTag = true
            case "#EXT-X-ENDLIST":
                playlist.hasEndList = true
                sawMediaTag = true
            case "#EXT-X-PLAYLIST-TYPE":
                playlist.playlistType = value.uppercased()
                sawMediaTag = true
            case "#EXT-X-MEDIA-SEQUENCE":
                playlist.mediaSequence = Int(value)
                sawMediaTag = true
            case "#EXT-X-TARGETDURATION":
                playlist.targetDuration = Int(value)
                sawMediaTag = true
            default:
                break
            }
        }
        if let orphan = pending { playlist.warnings.append(missingURI(orphan)) }
        if sawStreamInf {
            playlist.kind = .master
            if sawMediaTag { playlist.warnings.append("playlist mixes master (#EXT-X-STREAM-INF) and media tags; read as master") }
        }
        return playlist
    }

    /// Parses an attribute list (`BANDWIDTH=1,CODECS="a,b",RESOLUTION=1x1`): names uppercased,
    /// quoted values unquoted (commas inside quotes kept), first occurrence of a name wins.
    static func attributes(_ list: String) -> [String: String] {
        var result: [String: String] = [:]
        let b = Array(list.utf8)
        var i = 0
        while i < b.count {
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x2C { i += 1 }
            let nameStart = i
            while i < b.count, b[i] != 0x3D, b[i] != 0x2C { i += 1 }
            let name = String(decoding: b[nameStart..<i], as: UTF8.self).trimmedWhitespace.uppercased()
            guard i < b.count, b[i] == 0x3D else { continue }  // a name without a value: skipped
            i += 1
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
            let value: String
            if i < b.count, b[i] == 0x22 {
                i += 1
                let start = i
                while i < b.count, b[i] != 0x22 { i += 1 }
                value = String(decoding: b[start..<i], as: UTF8.self)
                while i < b.count, b[i] != 0x2C { i += 1 }  // past the closing quote to the comma
            } else {
                let start = i
                while i < b.count, b[i] != 0x2C { i += 1 }
                value = String(decoding: b[start..<i], as: UTF8.self).trimmedWhitespace
            }
            if !name.isEmpty, result[name] == nil { result[name] = value }
        }
        return result
    }

    private static func variant(from attributes: [String: String]) -> HLSVariant {
        var variant = HLSVariant(
            uri: "", bandwidth: attributes["BANDWIDTH"].flatMap { Int($0) },
            codecs: attributes["CODECS"].map(CodecString.split) ?? [],
            supplementalCodecs: attributes["SUPPLEMENTAL-CODECS"].map(CodecString.split) ?? [],
            videoRange: attributes["VIDEO-RANGE"].map { $0.trimmedWhitespace.uppercased() })
        if let resolution = attributes["RESOLUTION"] {
            let parts = resolution.lowercased().split(separator: "x", maxSplits: 1)
            if parts.count == 2, let w = Int(String(parts[0]).trimmedWhitespace),
               let h = Int(String(parts[1]).trimmedWhitespace), w > 0, h > 0 {
                variant.width = w
                variant.height = h
            }
        }
        return variant
    }

    private static func missingURI(_ variant: HLSVariant) -> String {
        let size = variant.width.map { "\($0)x\(variant.height ?? 0) " } ?? ""
        return "#EXT-X-STREAM-INF (\(size)BANDWIDTH=\(variant.bandwidth ?? 0)) has no URI line; ignored"
    }

    /// Splits on LF, CRLF or CR; drops a leading UTF-8 BOM; trims spaces and tabs.
    private static func splitLines(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var i = start
        while i <= bytes.count {
            if i == bytes.count || bytes[i] == 0x0A || bytes[i] == 0x0D {
                var a = start
                var b = i
                while a < b, bytes[a] == 0x20 || bytes[a] == 0x09 { a += 1 }
                while b > a, bytes[b - 1] == 0x20 || bytes[b - 1] == 0x09 { b -= 1 }
                lines.append(String(decoding: bytes[a..<b], as: UTF8.self))
                start = i + 1
            }
            i += 1
        }
        return lines
    }
}
