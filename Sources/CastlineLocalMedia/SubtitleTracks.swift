import CastCore
#if canImport(Glibc)
import Glibc
#endif

/// Subtitles for a local file (`--subtitles FILE|auto`): found, converted to WebVTT by ffmpeg
/// (SRT, ASS/SSA, WebVTT files, and text tracks embedded in the container), served with the
/// media (with CORS, as every served file) and sent as text tracks with a language and a name.
package enum SubtitleTracks {
    /// Where one subtitle track comes from.
    package enum Source: Equatable, Sendable {
        /// A file; `language` from `movie.<lang>.srt`.
        case file(path: String, language: String?)
        /// A text stream of the media file (its index in the container).
        case embedded(index: Int, language: String?, title: String?)

        package var language: String? {
            switch self {
            case .file(_, let language), .embedded(_, let language, _): return language
            }
        }

        /// The name the receiver shows: the stream's title, else the language, else the file's name.
        package var name: String {
            switch self {
            case .file(let path, let language): return language.map(Self.languageName) ?? String(path.split(separator: "/").last ?? "subtitles")
            case .embedded(let index, let language, let title): return title ?? language.map(Self.languageName) ?? "track \(index)"
            }
        }

        static func languageName(_ code: String) -> String {
            let names = ["en": "English", "eng": "English", "de": "Deutsch", "deu": "Deutsch", "ger": "Deutsch", "fr": "Français",
                         "fra": "Français", "fre": "Français", "es": "Español", "spa": "Español", "it": "Italiano", "ita": "Italiano",
                         "nl": "Nederlands", "nld": "Nederlands", "pt": "Português", "por": "Português", "ja": "日本語", "jpn": "日本語"]
            return names[code.lowercased()] ?? code
        }
    }

    /// Subtitle file extensions ffmpeg converts to WebVTT.
    static let extensions = ["srt", "ass", "ssa", "vtt"]
    static let mediaExtensions: Set<String> = ["mkv", "mp4", "m4v", "webm", "avi", "mov", "ts", "mpg", "wmv"]
    /// Embedded subtitle codecs that are text (bitmap ones, PGS and DVD, cannot become WebVTT).
    static let textCodecs: Set<String> = ["subrip", "srt", "ass", "ssa", "mov_text", "webvtt", "text"]

    /// What `--subtitles` names for `media`: `auto` → `movie.srt` / `movie.<lang>.srt` (and
    /// .ass/.ssa/.vtt) next to it, else the container's text streams; otherwise the file given.
    /// Pure apart from listing the folder (`names`: the folder's entries, for tests).
    package static func find(_ given: String, media: String, streams: [MediaStreamInfo], names: [String]? = nil) -> [Source] {
        guard given == "auto" else { return [.file(path: given, language: nil)] }
        let slash = media.lastIndex(of: "/") ?? media.startIndex
        let folder = String(media[..<slash])
        let fileName = String(media[media.index(after: slash)...])
        let base = fileName.lastIndex(of: ".").map { String(fileName[..<$0]) } ?? fileName
        var found: [Source] = []
        for name in (names ?? listFolder(folder.isEmpty ? "/" : folder)).sorted() where name.hasPrefix(base + ".") && name != fileName {
            let parts = name.dropFirst(base.count + 1).split(separator: ".")
            guard let ext = parts.last.map({ $0.lowercased() }), extensions.contains(ext), parts.count <= 2 else { continue }
            let language = parts.count == 2 ? String(parts[0]) : nil
            // `movie.mkv.srt` names a file, not a language.
            if let language, language.count > 8 || mediaExtensions.contains(language.lowercased()) { continue }
            found.append(.file(path: folder + "/" + name, language: language))
        }
        if found.isEmpty {
            found = streams.filter { $0.kind == .subtitle && textCodecs.contains($0.codec) }
                .map { .embedded(index: $0.index, language: $0.language, title: $0.title) }
        }
        return found
    }

    static func listFolder(_ folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir), names.count < 10_000 {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// ffmpeg's arguments converting `source` (of `media`) to WebVTT at `output`.
    package static func conversionArguments(_ source: Source, media: String, output: String) -> [String] {
        let common = ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"]
        switch source {
        case .file(let path, _): return common + ["-i", path, "-f", "webvtt", output]
        case .embedded(let index, _, _): return common + ["-i", media, "-map", "0:\(index)", "-f", "webvtt", output]
        }
    }

    /// The LOAD's text tracks for `urls` (one per source, in order), ids from 1.
    package static func tracks(_ sources: [Source], urls: [String]) -> [MediaTrack] {
        zip(sources, urls).enumerated().map { i, pair in
            MediaTrack(trackID: i + 1, type: .text, trackContentID: pair.1, trackContentType: "text/vtt", subtype: .subtitles,
                       language: pair.0.language ?? "und", name: pair.0.name)
        }
    }
}
