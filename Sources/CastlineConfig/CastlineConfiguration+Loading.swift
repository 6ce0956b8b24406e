import CastCore
import Glibc

extension CastlineConfiguration {
    /// The largest config file read (a config is a few KiB; this refuses a wrong path to a video).
    package static let maximumFileSize = 4 << 20

    /// Reads and decodes a config file. An unreadable, oversized or non-UTF-8 file is one
    /// diagnostic at 1:1 that says what is wrong.
    package static func load(path: String) throws(ConfigErrors) -> (CastlineConfiguration, warnings: [ConfigDiagnostic]) {
        let text: String
        do { text = try readText(path) } catch {
            throw ConfigErrors([ConfigDiagnostic(file: path, mark: SourceMark(line: 1, column: 1), message: error.message)])
        }
        return try parse(text, file: path)
    }

    /// The config's `api.socket` alone, which is all a CLI command needs of the config to find
    /// the daemon: the file read and parsed into YAML nodes, no section decoded or checked. Nil
    /// when the file cannot be read or parsed, or sets no absolute `api.socket` (a config with
    /// errors elsewhere still names its socket: a daemon may run on it with the config before).
    package static func apiSocket(path: String) -> String? {
        guard let text = try? readText(path), let root = try? YAMLParser.parse(text),
              case .mapping(let top) = root.content,
              let api = top.first(where: { Self.isKey($0.key, "api") })?.value, case .mapping(let fields) = api.content,
              let socket = fields.first(where: { Self.isKey($0.key, "socket") })?.value,
              case .scalar(let value, _) = socket.content, value.hasPrefix("/") else { return nil }
        return value
    }

    private static func isKey(_ node: YAMLNode, _ name: String) -> Bool {
        if case .scalar(let text, _) = node.content { return text == name }
        return false
    }

    struct ReadError: Error { var message: String }

    static func readText(_ path: String) throws(ReadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(message: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(message: "cannot stat: \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ReadError(message: "not a regular file") }
        let bytes: [UInt8]
        do { bytes = try SmallFile.read(fd: fd, path: path, limit: maximumFileSize) } catch {
            if error.step == .tooLarge { throw ReadError(message: "larger than \(maximumFileSize >> 20) MiB: not a castline config") }
            throw ReadError(message: "cannot read: \(error.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReadError(message: "not UTF-8 text")
        }
        return text
    }
}
