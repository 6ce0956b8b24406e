import CastCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain POSIX file access for the PEM files of a ``SimulatorAuthority`` (no Foundation).
enum AuthorityFiles {
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func reason() -> String { String(cString: strerror(errno)) }

    /// Creates `path` (mode 0700) unless it is already a directory.
    static func makeDirectory(_ path: String) throws(CryptoError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw .file(path: path, reason: "exists and is not a directory") }
            return
        }
        guard mkdir(path, 0o700) == 0 else { throw .file(path: path, reason: "cannot create directory: \(reason())") }
    }

    /// Reads a whole (small) text file.
    static func readText(_ path: String) throws(CryptoError) -> String {
        let bytes: [UInt8]?
        do { bytes = try SmallFile.read(path: path, limit: 1 << 20) } catch {
            switch error.step {
            case .tooLarge: throw .file(path: path, reason: "larger than 1 MiB, not a PEM file")
            case .open: throw .file(path: path, reason: "cannot open: \(error.reason)")
            default: throw .file(path: path, reason: "cannot read: \(error.reason)")
            }
        }
        guard let bytes else { throw .file(path: path, reason: "cannot open: \(String(cString: strerror(ENOENT)))") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to a temporary file with `mode`, then renames it over `path`, so readers
    /// never see a partial file and a key is never readable by others, even briefly.
    static func writeText(_ path: String, _ text: String, mode: mode_t) throws(CryptoError) {
        do {
            try SmallFile.replace(path: path, contents: Array(text.utf8), mode: mode)
        } catch {
            switch error.step {
            case .create: throw .file(path: error.path, reason: "cannot create: \(error.reason)")
            case .setMode: throw .file(path: path, reason: "cannot set mode: \(error.reason)")
            case .sync: throw .file(path: path, reason: "cannot sync: \(error.reason)")
            case .rename: throw .file(path: path, reason: "cannot rename to \(path): \(error.reason)")
            default: throw .file(path: path, reason: "cannot write: \(error.reason)")
            }
        }
    }
}
