import CastCore
import CastlineDaemon
#if canImport(Glibc)
import Glibc
#endif

/// The bearer token of the TCP listener, read from `api.token_file`. The file must be a regular
/// file that only its owner can read (mode 0600 or stricter): castline refuses one that others
/// can read, as ssh does a private key. The token never appears in a log.
package struct APIToken: Sendable {
    let value: [UInt8]

    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
    }

    package init(file path: String) throws(Refusal) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Refusal(description: "api.token_file \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw Refusal(description: "api.token_file \(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw Refusal(description: "api.token_file \(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
                          + "make it 0600 (chmod 600 \(path))")
        }
        let bytes: [UInt8]
        do { bytes = try SmallFile.read(path: path, limit: 4096) ?? [] } catch {
            throw Refusal(description: "api.token_file \(path): \(error)")
        }
        var token = bytes[...]
        while let last = token.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { token = token.dropLast() }
        while let first = token.first, first == 0x20 || first == 0x09 { token = token.dropFirst() }
        guard token.count >= 16 else { throw Refusal(description: "api.token_file \(path): the token must be at least 16 characters") }
        value = Array(token)
    }

    init(value: String) { self.value = Array(value.utf8) }

    /// Whether an `Authorization` header carries the token (compared in constant time).
    func accepts(_ header: String?) -> Bool {
        guard let header else { return false }
        let bytes = Array(header.utf8)
        let prefix = Array("Bearer ".utf8)
        guard bytes.count == prefix.count + value.count,
              bytes.prefix(prefix.count).map({ $0 | 0x20 }) == prefix.map({ $0 | 0x20 }) else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(bytes.dropFirst(prefix.count), value) { difference |= a ^ b }
        return difference == 0
    }
}
