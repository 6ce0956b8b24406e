internal import COpenSSL

/// Why a key, certificate or signature operation failed. Every message says what was being
/// done and, when OpenSSL reported something, ends with OpenSSL's own error string.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Generating a key failed (unsupported size, no entropy, allocation).
    case keyGeneration(String)
    /// A key could not be read or written (bad PEM, wrong type, encoding failure).
    case key(String)
    /// A certificate could not be parsed, built or signed.
    case certificate(String)
    /// Signing data failed.
    case signing(String)
    /// Reading or writing a file or directory failed.
    case file(path: String, reason: String)

    public var description: String {
        switch self {
        case .keyGeneration(let message): return "key generation failed: \(message)"
        case .key(let message): return "key: \(message)"
        case .certificate(let message): return "certificate: \(message)"
        case .signing(let message): return "signing failed: \(message)"
        case .file(let path, let reason): return "\(path): \(reason)"
        }
    }
}

/// OpenSSL's thread-local error queue, drained into one readable line.
enum OpenSSLErrors {
    /// All queued errors as `error:…` strings joined by "; ", or "no OpenSSL error queued".
    /// Empties the queue, so a later failure does not report a stale error.
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if messages.count < 4 { messages.append(describe(code)) }
        }
        return messages.isEmpty ? "no OpenSSL error queued" : messages.joined(separator: "; ")
    }

    /// `message` followed by the drained OpenSSL errors.
    static func message(_ message: String) -> String {
        "\(message) (OpenSSL: \(drain()))"
    }

    /// Forgets errors left by calls whose failure was handled (e.g. an optional lookup).
    static func clear() { ERR_clear_error() }

    private static func describe(_ code: UInt) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { ERR_error_string_n(code, $0.baseAddress, $0.count) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
