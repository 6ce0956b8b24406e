import CastCore
import CastHTTP
import CastlineLocalMedia
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The items a playlist stands for: a list, a local folder (its media files, sorted by name,
/// optionally only some extensions), or an M3U/M3U8 playlist (a local file or a URL; an HLS
/// manifest, which also ends in .m3u8, is one stream, not a playlist).
package enum Playlist {
    /// The extensions a folder's files are taken with when no filter is given.
    package static let mediaExtensions: Set<String> = ["mp4", "m4v", "webm", "mkv", "mp3", "m4a", "aac", "ogg", "oga", "flac", "wav",
                                                       "jpg", "jpeg", "png", "gif", "webp", "m3u8", "mpd"]
    /// Items a playlist may have at most (a folder of 100,000 files is refused, not loaded).
    package static let maximumItems = 10_000

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// The media items of the M3U text `text`: every line that is not blank or a `#` comment,
    /// relative entries resolved against `base` (the playlist's folder or URL). nil when the
    /// text is an HLS manifest (`#EXT-X-` tags): a stream to cast as it is.
    package static func m3uItems(_ text: String, base: String) -> [String]? {
        var items: [String] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(of: [" ", "\t", "\r", "\u{FEFF}"])
            if line.hasPrefix("#EXT-X-") { return nil }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            items.append(resolve(line, against: base))
        }
        return items
    }

    /// `entry` made absolute against `base` (a folder path ending in `/`, or a URL).
    static func resolve(_ entry: String, against base: String) -> String {
        let lower = entry.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") || entry.hasPrefix("/") { return entry }
        if let url = HTTPURL(base), let resolved = url.resolving(entry) { return resolved.description }
        let folder = base.hasSuffix("/") ? base : String(base[...(base.lastIndex(of: "/") ?? base.startIndex)])
        return folder + entry
    }

    /// Whether `path` names a local playlist file or folder (a URL may still be a playlist).
    package static func isPlaylistPath(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".m3u") || (!lower.hasPrefix("http") && lower.hasSuffix(".m3u8")) || isFolder(path)
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return path.hasPrefix("/") && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The media files of `folder`, sorted by name; `extensions` (lowercase, no dot) filters
    /// them (nil: ``mediaExtensions``). Hidden files are skipped.
    package static func folderItems(_ folder: String, extensions: Set<String>?) throws(Failure) -> [String] {
        guard let dir = opendir(folder) else { throw Failure(description: "cannot read the folder \(folder): \(String(cString: strerror(errno)))") }
        defer { closedir(dir) }
        let wanted = extensions ?? mediaExtensions
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: "."), wanted.contains(name[name.index(after: dot)...].lowercased()) else { continue }
            names.append(name)
            guard names.count <= maximumItems else { throw Failure(description: "\(folder) has more than \(maximumItems) media files") }
        }
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        return names.sorted().map { base + $0 }
    }

    /// A playlist's local files as one server publishes them: each under its position and name
    /// (`3-intro.mp4`, so the same file twice stays two items), typed by `contentType` or its
    /// extension. `url(name)` gives the served URL; the items' URLs keep the playlist's order,
    /// http(s) items as they are.
    package struct Published: Sendable {
        package var files: [String: ServedFile] = [:]
        var names: [Int: String] = [:]
        let sources: [String]

        /// `roots`: the allowed folder each local path lies in (`media.roots`), by path.
        package init(_ sources: [String], contentType: String? = nil, roots: [String: String] = [:]) {
            self.sources = sources
            for (index, source) in sources.enumerated() where source.hasPrefix("/") {
                let name = "\(index + 1)-\(JobMedia.fileName(source))"
                names[index] = name
                files[name] = ServedFile(path: source, contentType: contentType ?? ContentTypeGuess.forPath(source) ?? "application/octet-stream",
                                         root: roots[source], displayName: JobMedia.fileName(source))
            }
        }

        /// Every item's URL, local files at `server`.
        package func urls(at server: MediaPublication?) -> [String] {
            sources.enumerated().map { index, source in
                guard let server, let name = names[index] else { return source }
                return server.url(for: name)
            }
        }
    }

    /// The items `source` stands for: a folder's files, a playlist file's or URL's entries, or
    /// `[source]` for anything else (a URL that is media, an HLS manifest).
    package static func items(_ source: String, extensions: Set<String>?, group: EventLoopGroup) async throws(Failure) -> [String] {
        if isFolder(source) {
            let items = try folderItems(source, extensions: extensions)
            guard !items.isEmpty else { throw Failure(description: "\(source) has no media files (\(extensions.map { $0.sorted().joined(separator: ", ") } ?? "the usual extensions"))") }
            return items
        }
        let lower = source.lowercased()
        guard lower.hasSuffix(".m3u") || lower.hasSuffix(".m3u8") else { return [source] }
        let text: String
        if let url = HTTPURL(source) {
            switch await HTTPExchange.request(.GET, url: url, timeout: 10, maximumBody: 4 << 20, group: group) {
            case .success(let answer) where answer.status == 200: text = String(decoding: answer.body, as: UTF8.self)
            case .success(let answer): throw Failure(description: "\(source) answers HTTP \(answer.status)")
            case .failure(let failure): throw Failure(description: "\(source) cannot be fetched: \(failure)")
            }
        } else {
            let bytes: [UInt8]?
            do { bytes = try SmallFile.read(path: source, limit: 4 << 20) } catch { throw Failure(description: "\(error)") }
            guard let bytes else { throw Failure(description: "cannot read \(source): \(String(cString: strerror(ENOENT)))") }
            text = String(decoding: bytes, as: UTF8.self)
        }
        guard let items = m3uItems(text, base: source) else { return [source] }
        guard !items.isEmpty else { throw Failure(description: "\(source) lists no media") }
        guard items.count <= maximumItems else { throw Failure(description: "\(source) lists more than \(maximumItems) items") }
        return items
    }
}

extension Substring {
    func trimmingCharacters(of set: Set<Character>) -> String {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
