import CastCore
import CastlineConfig
#if canImport(Glibc)
import Glibc
#endif

/// Which local files castline may serve to devices (config `media.roots`): a path must lie in an
/// allowed folder once every symlink is resolved. The CLI in direct mode serves what its user
/// names (``anywhere``); `castline run` serves only from its roots, and with none, nothing a
/// command (API, MQTT, the CLI through the daemon) names. Jobs in the config file follow the
/// roots when there are some. Pure apart from `realpath`; `Sendable`.
package struct LocalMediaPolicy: Sendable, Equatable {
    /// The allowed folders, resolved; nil: any file the process can read.
    package let roots: [String]?

    /// Any file (the CLI in direct mode, on its user's own files).
    package static let anywhere = LocalMediaPolicy(resolvedRoots: nil)

    private init(resolvedRoots: [String]?) { roots = resolvedRoots }

    /// The policy for `roots` (absolute folders; resolved now: a root that does not exist
    /// allows nothing).
    package init(roots: [String]) {
        self.roots = roots.compactMap { root in
            guard let resolved = Self.realPath(root) else { return nil }
            return resolved == "/" ? "" : resolved
        }
    }

    /// `path` resolved, with the root it lies in (nil under ``anywhere``), or why it may not be
    /// served: 403 `path_not_allowed` for a path outside every root (also when it does not exist:
    /// the answer must not tell which files exist outside), 400 `unreadable_file` for a path
    /// inside a root that does not resolve.
    package func resolve(_ path: String, what: String = "") throws(LocalMediaError) -> (path: String, root: String?) {
        let subject = what.isEmpty ? path : "\(what) \(path)"
        guard let roots else {
            guard let resolved = Self.realPath(path) else {
                throw LocalMediaError.usage("unreadable_file", "cannot read \(subject): \(String(cString: strerror(errno)))")
            }
            return (resolved, nil)
        }
        guard !roots.isEmpty else {
            throw LocalMediaError(.forbidden, "path_not_allowed", "\(subject): castline run serves no local file unless media.roots allows "
                               + "its folder (add it to media.roots in the config), or cast it with --direct from your own process")
        }
        let lexical = Self.normalised(path)
        guard roots.contains(where: { Self.isInside(lexical, $0) }) || Self.realPath(path).map({ r in roots.contains { Self.isInside(r, $0) } }) == true else {
            throw LocalMediaError(.forbidden, "path_not_allowed", "\(subject) is outside media.roots (\(roots.map { $0.isEmpty ? "/" : $0 }.joined(separator: ", ")))")
        }
        guard let resolved = Self.realPath(path) else {
            throw LocalMediaError.usage("unreadable_file", "cannot read \(subject): \(String(cString: strerror(errno)))")
        }
        guard let root = roots.first(where: { Self.isInside(resolved, $0) }) else {
            throw LocalMediaError(.forbidden, "path_not_allowed", "\(subject) resolves to a file outside media.roots (a symlink out of an allowed folder)")
        }
        return (resolved, root.isEmpty ? "/" : root)
    }

    /// Whether `path` (absolute, normalised) is `root` or lies below it.
    static func isInside(_ path: String, _ root: String) -> Bool {
        path == root || path.hasPrefix(root + "/")
    }

    /// `path` with `.`, `..` and repeated slashes folded, without touching the file system.
    static func normalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension JSONValue {
    /// The value with every URL of a file castline serves replaced by the file's name
    /// (``ServedMediaNames``): what the API, events and MQTT show of a device's media.
    package var redactingServedURLs: JSONValue {
        switch self {
        case .string(let text): return .string(ServedMediaNames.shared.redact(text))
        case .array(let items): return .array(items.map(\.redactingServedURLs))
        case .object(var object):
            for (key, value) in object { object.set(key, value.redactingServedURLs) }
            return .object(object)
        default: return self
        }
    }
}

extension JobEntry {
    /// Every local path the job would read or serve: its media (or playlist folder, M3U file,
    /// items), each schedule entry's and the fallback's, its announcement.
    package var localPaths: [String] {
        var medias: [MediaEntry] = [media]
        medias += scheduled.compactMap(\.media)
        if let fallback = fallback?.media { medias.append(fallback) }
        var paths = medias.flatMap { [$0.url] + ($0.items ?? []) }
        if let announcement { paths.append(announcement.media) }
        return paths.filter { $0.hasPrefix("/") }
    }
}
