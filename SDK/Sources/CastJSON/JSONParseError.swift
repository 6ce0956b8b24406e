/// Why a JSON text was rejected, and at which byte.
///
/// `offset` is the 0-based UTF-8 byte offset of the first byte that could not be accepted (for
/// truncated input: the input length). The description reads
/// `invalid JSON at byte 17: expected ':' after object key`.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 0-based UTF-8 byte offset of the offending byte.
    public var offset: Int
    /// What was wrong, in a short English phrase.
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
