extension ServedFile {
    /// Whether `leaf` may be served from a published folder: a plain file name (letters, digits,
    /// `.`, `-`, `_`; not starting with `.`), as a transcoder names its segments.
    package static func isPlainLeaf(_ leaf: Substring) -> Bool {
        !leaf.isEmpty && !leaf.hasPrefix(".")
            && leaf.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }
    }

    /// The `Content-Type` of a file inside a published folder, from its extension (the folder's
    /// own type for an extension not listed).
    package static func folderFileType(_ leaf: Substring, folderType: String) -> String {
        let ext = leaf.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return switch ext {
        case "m3u8": "application/x-mpegURL"
        case "m4s": "video/iso.segment"
        case "mp4": "video/mp4"
        case "ts": "video/mp2t"
        case "vtt": "text/vtt"
        default: folderType
        }
    }
}
