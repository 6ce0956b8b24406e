import Glibc

extension CastlineConfiguration {
    /// The largest config file read (a config is a few KiB; this refuses a wrong path to a video).
    public static let maximumFileSize = 4 << 20

    /// Reads and decodes a config file. An unreadable, oversized or non-UTF-8 file is one
    /// diagnostic at 1:1 that says what is wrong.
    public static func load(path: String) throws(ConfigErrors) -> (CastlineConfiguration, warnings: [ConfigDiagnostic]) {
        let text: String
        do { text = try readText(path) } catch {
            throw ConfigErrors([ConfigDiagnostic(file: path, mark: SourceMark(line: 1, column: 1), message: error.message)])
        }
        return try parse(text, file: path)
    }

    struct ReadError: Error { var message: String }

    static func readText(_ path: String) throws(ReadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(message: "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(message: "cannot stat: \(String(cString: strerror(errno)))") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ReadError(message: "not a regular file") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(message: "cannot read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumFileSize else {
                throw ReadError(message: "larger than \(maximumFileSize >> 20) MiB: not a castline config")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReadError(message: "not UTF-8 text")
        }
        return text
    }
}
