import CastCore
import CastlineDaemon
#if canImport(Glibc)
import Glibc
#endif

/// The bearer token of the TCP listener, read from `api.token_file` (``SecretFile``: a file only
/// its owner can read, or a systemd credential by name). The token never appears in a log.
package struct APIToken: Sendable {
    let value: [UInt8]

    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
    }

    package init(file path: String, environment: [String: String] = [:]) throws(Refusal) {
        let token: [UInt8]
        do { token = try SecretFile.read(path, key: "api.token_file", environment: environment) } catch {
            throw Refusal(description: error.description)
        }
        guard token.count >= 16 else { throw Refusal(description: "api.token_file \(path): the token must be at least 16 characters") }
        value = token
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
