#if canImport(Glibc)
import Glibc
#endif

/// Where plugins are looked for, in order: `--plugin-path`, `CASTLINE_PLUGIN_PATH`, the config's
/// `plugin_paths`, then the default folder next to the binary.
///
/// In the explicit folders every `*.so` is a plugin; in the binary's own folder (where SwiftPM
/// also puts other libraries) only `libCastlinePlugin*.so`, and in `<binary>/../lib/castline/plugins`
/// every `*.so` again. An entry may also name one `.so` file directly.
public struct PluginSearchPath: Sendable, Equatable {
    /// Which setting an entry came from (shown by `plugins list`).
    package enum Source: String, Sendable {
        case commandLine = "--plugin-path"
        case environment = "CASTLINE_PLUGIN_PATH"
        case config = "plugin_paths"
        case defaultFolder = "default"
    }

    package struct Entry: Sendable, Equatable {
        package var path: String
        package var source: Source
        /// Only files whose name starts with this are plugins (nil: every `*.so`).
        package var namePrefix: String?
    }

    package static let environmentVariable = "CASTLINE_PLUGIN_PATH"
    /// The name prefix of first-party plugin products built next to the binary.
    package static let builtPluginPrefix = "libCastlinePlugin"

    package var entries: [Entry]

    package init(entries: [Entry]) { self.entries = entries }

    /// The search path from every source. Empty path components are skipped.
    public init(commandLine: [String] = [], environment: [String: String] = [:], config: [String] = [],
                executableFolder: String? = PluginSearchPath.executableFolder()) {
        var entries: [Entry] = []
        for p in commandLine where !p.isEmpty { entries.append(Entry(path: p, source: .commandLine)) }
        if let env = environment[Self.environmentVariable] {
            for p in env.split(separator: ":") where !p.isEmpty { entries.append(Entry(path: String(p), source: .environment)) }
        }
        for p in config where !p.isEmpty { entries.append(Entry(path: p, source: .config)) }
        if let folder = executableFolder {
            entries.append(Entry(path: folder, source: .defaultFolder, namePrefix: Self.builtPluginPrefix))
            entries.append(Entry(path: folder + "/../lib/castline/plugins", source: .defaultFolder))
        }
        self.entries = entries
    }

    /// The folder of the running executable (`/proc/self/exe`), nil if it cannot be read.
    public static func executableFolder() -> String? {
        guard let path = executablePath(), let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// The running executable's path (`/proc/self/exe`), nil if it cannot be read.
    package static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the plugin file at `path` ships with castline: it lies (symlinks resolved) in the
    /// binary's own folder with the ``builtPluginPrefix``, or in `<binary>/../lib/castline/plugins`.
    /// Only such plugins run in castline's process by default.
    package static func isFirstParty(_ path: String, executableFolder: String? = PluginSearchPath.executableFolder()) -> Bool {
        guard let executableFolder, let file = realPath(path), let slash = file.lastIndex(of: "/") else { return false }
        let folder = String(file[..<slash]), name = file[file.index(after: slash)...]
        if folder == realPath(executableFolder), name.hasPrefix(builtPluginPrefix) { return true }
        if let plugins = realPath(executableFolder + "/../lib/castline/plugins"), folder == plugins { return true }
        return false
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Plugin files in search order, each with the entry it came from. Folders that do not exist
    /// are skipped silently for the default source and reported for the others.
    /// The same file reached twice (named on its own and found in a searched folder, or through
    /// a symlinked folder) is a candidate once, at its first place: it is one plugin, not a
    /// duplicate to warn about.
    package func candidateFiles() -> (files: [(path: String, entry: Entry)], missing: [Entry]) {
        var files: [(String, Entry)] = []
        var missing: [Entry] = []
        var seen = Set<FileIdentity>()
        func add(_ path: String, _ entry: Entry) {
            var st = stat()
            if stat(path, &st) == 0, !seen.insert(FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))).inserted { return }
            files.append((path, entry))
        }
        for entry in entries {
            var st = stat()
            guard stat(entry.path, &st) == 0 else {
                if entry.source != .defaultFolder { missing.append(entry) }
                continue
            }
            if (st.st_mode & S_IFMT) == S_IFREG {
                add(entry.path, entry)
                continue
            }
            guard let dir = opendir(entry.path) else {
                missing.append(entry)
                continue
            }
            var names: [String] = []
            while let item = readdir(dir) {
                let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard name.hasSuffix(".so") else { continue }
                if let prefix = entry.namePrefix, !name.hasPrefix(prefix) { continue }
                names.append(name)
            }
            closedir(dir)
            for name in names.sorted() { add(entry.path + "/" + name, entry) }
        }
        return (files, missing)
    }

    /// A file's identity whatever the path to it.
    struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
    }
}
