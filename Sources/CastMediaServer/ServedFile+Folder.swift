extension ServedFile {
    /// A file inside a published folder: a name `"hls/seg00003.m4s"` is served from the folder
    /// published as `"hls/"` (a ``ServedFile`` whose path is a directory) when its last part is
    /// a plain file name (letters, digits, `.`, `-`, `_`; no `..`). The folder's files may appear
    /// while it is served (a transcoder writing HLS segments); the type comes from the extension.
    package static func inFolder(_ name: String, of files: [String: ServedFile]) -> ServedFile? {
        guard let slash = name.lastIndex(of: "/") else { return nil }
        let folderName = String(name[...slash])
        let leaf = name[name.index(after: slash)...]
        guard let folder = files[folderName], !leaf.isEmpty, !leaf.hasPrefix("."),
              leaf.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        let ext = leaf.split(separator: ".").last.map { $0.lowercased() } ?? ""
        let type = switch ext {
        case "m3u8": "application/x-mpegURL"
        case "m4s": "video/iso.segment"
        case "mp4": "video/mp4"
        case "ts": "video/mp2t"
        case "vtt": "text/vtt"
        default: folder.contentType
        }
        return ServedFile(path: folder.path + "/" + leaf, contentType: type)
    }
}
