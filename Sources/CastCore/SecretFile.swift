#if canImport(Glibc)
import Glibc
#endif

/// A file that holds a secret (the API token, the MQTT password): every one is checked the same
/// way. It must be a regular file that no one but its owner can read or write (0600 or
/// stricter), as ssh asks of a private key. A bare name (no `/`) is a systemd credential: the
/// file of that name in `$CREDENTIALS_DIRECTORY` (`LoadCredential=api-token:/etc/castline/api-token`
/// in the unit), which is how a `DynamicUser` service reads a root-owned secret. Pure apart from
/// the file system.
package enum SecretFile {
    package struct Refusal: Error, Sendable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The path `given` stands for: itself, or for a bare name the credential's file.
    package static func resolve(_ given: String, environment: [String: String]) throws(Refusal) -> String {
        guard !given.contains("/") else { return given }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw Refusal("\"\(given)\" names a systemd credential, but $CREDENTIALS_DIRECTORY is not set "
                          + "(add LoadCredential=\(given):/etc/castline/\(given) to the unit, or give an absolute path)")
        }
        return directory + "/" + given
    }

    /// Why the file at `path` may not hold a secret (`key`: the config key, for the message), nil
    /// when it may.
    package static func problem(_ path: String, key: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return "\(key) \(path): \(String(cString: strerror(errno)))" }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return "\(key) \(path) is not a regular file" }
        guard info.st_mode & 0o077 == 0 else {
            return "\(key) \(path) can be read or written by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                + "make it 0600 (chmod 600 \(path)), or hand it over as a systemd credential (LoadCredential=)"
        }
        return nil
    }

    /// The secret in `given` (resolved, checked, at most 4 KiB, surrounding whitespace and line
    /// ends trimmed).
    package static func read(_ given: String, key: String, environment: [String: String]) throws(Refusal) -> [UInt8] {
        let path = try resolve(given, environment: environment)
        if let problem = problem(path, key: key) { throw Refusal(problem) }
        let bytes: [UInt8]
        guard access(path, R_OK) == 0 else {
            throw Refusal("\(key) \(path): \(String(cString: strerror(errno))) (a service's own user cannot read root's files: "
                          + "hand it over with LoadCredential=NAME:\(path) in the unit and name it in the config by NAME)")
        }
        do { bytes = try SmallFile.read(path: path, limit: 4096) ?? [] } catch { throw Refusal("\(key) \(path): \(error)") }
        var secret = bytes[...]
        while let last = secret.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { secret = secret.dropLast() }
        while let first = secret.first, first == 0x20 || first == 0x09 { secret = secret.dropFirst() }
        return Array(secret)
    }
}
