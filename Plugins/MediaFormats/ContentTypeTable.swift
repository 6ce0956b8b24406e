// Content types from file extensions, Content-Type header parsing, manifest kinds.
// Pure stdlib: no Foundation.

/// Maps URL / file path extensions to the MIME types Cast receivers expect, parses
/// `Content-Type` values and tells streaming manifests (HLS, DASH, Smooth) apart.
enum ContentTypeTable {
    /// The adaptive-streaming manifest formats a content type can name.
    enum ManifestKind: String, Sendable, CaseIterable {
        case hls, dash, smoothStreaming

        /// The content type this table writes for the kind.
        var contentType: String {
            switch self {
            case .hls: return "application/x-mpegURL"
            case .dash: return "application/dash+xml"
            case .smoothStreaming: return "application/vnd.ms-sstr+xml"
            }
        }
    }

    /// A parsed `Content-Type` value: `type/subtype` lowercased and trimmed, parameters with
    /// lowercased names and unquoted values.
    struct Parsed: Equatable, Sendable {
        var mediaType: String
        var parameters: [String: String]
    }

    /// The content type for an extension (without the dot, any case), or nil if unknown.
    static func contentType(forExtension ext: String) -> String? {
        switch ext.lowercased() {
        case "m3u8": return ManifestKind.hls.contentType
        case "mpd": return ManifestKind.dash.contentType
        case "ism", "isml", "manifest": return ManifestKind.smoothStreaming.contentType
        case "mp4", "m4v": return "video/mp4"
        case "webm": return "video/webm"
        case "mkv": return "video/x-matroska"
        case "mov": return "video/quicktime"
        case "ts": return "video/mp2t"
        case "mp3": return "audio/mpeg"
        case "m4a": return "audio/mp4"
        case "aac": return "audio/aac"
        case "flac": return "audio/flac"
        case "ogg", "oga", "opus": return "audio/ogg"
        case "wav": return "audio/wav"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        case "vtt": return "text/vtt"
        default: return nil
        }
    }

    /// The content type for a URL or file path, from its last path component's extension.
    /// Smooth Streaming's `…/name.ism/Manifest` is recognised (a bare `Manifest` elsewhere is
    /// not); Azure-style `Manifest(format=m3u8-…)` / `Manifest(format=mpd-…)` map to HLS / DASH.
    static func contentType(forURL urlOrPath: String) -> String? {
        let components = pathComponents(of: urlOrPath)
        guard let last = components.last?.lowercased(), !last.isEmpty else { return nil }
        if last.hasPrefix("manifest(") {
            if last.contains("format=m3u8") { return ManifestKind.hls.contentType }
            if last.contains("format=mpd") { return ManifestKind.dash.contentType }
        }
        let previous = components.dropLast().last?.lowercased() ?? ""
        if last == "manifest" || last.hasPrefix("manifest("), previous.hasSuffix(".ism") || previous.hasSuffix(".isml") {
            return ManifestKind.smoothStreaming.contentType
        }
        return pathExtension(of: urlOrPath).flatMap(contentType(forExtension:))
    }

    /// The extension of the last path component (no dot, case kept), or nil. For URLs (anything
    /// not starting with `/`, `./`, `../` or `~`) the query string and fragment are dropped first,
    /// as is `scheme://authority`; plain file paths are taken as they are (`#` and `?` are legal
    /// in file names).
    static func pathExtension(of urlOrPath: String) -> String? {
        guard let last = pathComponents(of: urlOrPath).last,
              let dot = last.lastIndex(of: "."), dot != last.startIndex else { return nil }
        let ext = String(last[last.index(after: dot)...])
        return ext.isEmpty ? nil : ext
    }

    /// Whether a content type (any case, parameters allowed) names an HLS playlist. Accepts
    /// `application/x-mpegURL`, `application/vnd.apple.mpegurl`, `audio/mpegurl`, `audio/x-mpegurl`.
    static func isHLS(_ contentType: String) -> Bool { manifestKind(of: contentType) == .hls }

    /// Whether a content type names a DASH MPD (`application/dash+xml`).
    static func isDASH(_ contentType: String) -> Bool { manifestKind(of: contentType) == .dash }

    /// Whether a content type names an HLS or DASH manifest.
    static func isManifest(_ contentType: String) -> Bool {
        let kind = manifestKind(of: contentType)
        return kind == .hls || kind == .dash
    }

    /// The manifest kind a content type names, or nil for media (and unknown) types.
    static func manifestKind(of contentType: String) -> ManifestKind? {
        switch parse(contentType).mediaType {
        case "application/x-mpegurl", "application/vnd.apple.mpegurl", "application/mpegurl",
            "audio/mpegurl", "audio/x-mpegurl":
            return .hls
        case "application/dash+xml": return .dash
        case "application/vnd.ms-sstr+xml": return .smoothStreaming
        default: return nil
        }
    }

    /// Types that say nothing about the media (servers' defaults); the analyzer ignores them.
    static func isGeneric(_ mediaType: String) -> Bool {
        switch parse(mediaType).mediaType {
        case "application/octet-stream", "binary/octet-stream", "application/binary",
            "application/unknown", "text/plain", "":
            return true
        default: return false
        }
    }

    /// Parses `type/subtype; name=value; name="quoted; value"`. Quoted values may contain `;`
    /// and `,` and backslash escapes.
    static func parse(_ contentType: String) -> Parsed {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for c in contentType {
            if escaped { current.append(c); escaped = false; continue }
            if quoted && c == "\\" { current.append(c); escaped = true; continue }
            if c == "\"" { quoted.toggle() }
            if c == ";" && !quoted { pieces.append(current); current = ""; continue }
            current.append(c)
        }
        pieces.append(current)
        var parameters: [String: String] = [:]
        for piece in pieces.dropFirst() {
            guard let eq = piece.firstIndex(of: "=") else { continue }
            let name = String(piece[..<eq]).trimmedWhitespace.lowercased()
            var value = String(piece[piece.index(after: eq)...]).trimmedWhitespace
            if value.hasPrefix("\""), value.count >= 2, value.hasSuffix("\"") {
                value = unescapeQuoted(String(value.dropFirst().dropLast()))
            }
            if !name.isEmpty, parameters[name] == nil { parameters[name] = value }
        }
        return Parsed(mediaType: pieces[0].trimmedWhitespace.lowercased(), parameters: parameters)
    }

    /// Sniffs a manifest from the start of a body: `#EXTM3U` (after an optional BOM and
    /// whitespace) → HLS; an `<MPD` or `<prefix:MPD` element within the first 64 KiB → DASH.
    static func sniffManifest<C: Collection>(_ body: C) -> ManifestKind? where C.Element == UInt8 {
        let head = Array(body.prefix(65_536))
        var i = 0
        if head.count >= 3, head[0] == 0xEF, head[1] == 0xBB, head[2] == 0xBF { i = 3 }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 || head[i] == 0x0A || head[i] == 0x0D { i += 1 }
        if head[i...].starts(with: Array("#EXTM3U".utf8)) { return .hls }
        var j = i
        while j < head.count {
            if head[j] == 0x3C {  // <
                var k = j + 1
                while k < head.count, isNameByte(head[k]), head[k] != 0x3A { k += 1 }
                if k < head.count, head[k] == 0x3A, k > j + 1 { k += 1 } else { k = j + 1 }
                if head[k...].starts(with: Array("MPD".utf8)) {
                    let after = k + 3
                    if after >= head.count || !isNameByte(head[after]) { return .dash }
                }
            }
            j += 1
        }
        return nil
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
            || b == 0x5F || b == 0x2D || b == 0x2E || b == 0x3A || b >= 0x80
    }

    private static func unescapeQuoted(_ s: String) -> String {
        var out = ""
        var escaped = false
        for c in s {
            if escaped { out.append(c); escaped = false } else if c == "\\" { escaped = true } else { out.append(c) }
        }
        return out
    }

    private static func pathComponents(of urlOrPath: String) -> [Substring] {
        var s = Substring(urlOrPath.trimmedWhitespace)
        let isPlainPath = s.hasPrefix("/") || s.hasPrefix("./") || s.hasPrefix("../") || s.hasPrefix("~")
        if !isPlainPath {
            if let hash = s.firstIndex(of: "#") { s = s[..<hash] }
            if let query = s.firstIndex(of: "?") { s = s[..<query] }
            if let scheme = s.firstRange(of: "://") {
                let rest = s[scheme.upperBound...]
                guard let slash = rest.firstIndex(of: "/") else { return [] }
                s = rest[slash...]
            }
        }
        return s.split(separator: "/", omittingEmptySubsequences: false)
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces, tabs, CR, LF and UTF-8 BOMs.
    var trimmedWhitespace: String {
        let u = Substring(String(self)).utf8
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        var start = u.startIndex
        var end = u.endIndex
        while start < end {
            if isSpace(u[start]) { start = u.index(after: start) } else if u[start..<end].starts(with: bom) {
                start = u.index(start, offsetBy: 3)
            } else { break }
        }
        while start < end {
            let last = u.index(before: end)
            if isSpace(u[last]) { end = last } else if u[start..<end].reversed().starts(with: bom.reversed()) {
                end = u.index(end, offsetBy: -3)
            } else { break }
        }
        return String(decoding: u[start..<end], as: UTF8.self)
    }

    /// The string without one pair of surrounding double quotes.
    var strippingQuotes: String {
        if count >= 2, hasPrefix("\""), hasSuffix("\"") { return String(dropFirst().dropLast()) }
        return String(self)
    }
}
