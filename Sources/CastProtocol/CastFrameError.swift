/// Framing limits of the Cast v2 channel: a 4-byte big-endian length, then the body.
public enum CastFrameLimits {
    /// Largest body accepted or sent, in bytes, not counting the 4-byte header (openscreen
    /// `kMaxBodySize`).
    public static let maxBodySize = 65_536
    /// Size of the length prefix.
    public static let headerSize = 4

    /// Why a body of `size` bytes may not be sent or received (empty, or over `limit`), or nil
    /// when it may: the codec's writes and the frame decoder's length prefixes.
    static func refusal(size: Int, limit: Int) -> CastFrameError? {
        if size == 0 { return .emptyBody }
        return size > limit ? .bodyTooLarge(size: UInt32(clamping: size), limit: limit) : nil
    }
}

/// A frame that cannot be valid: the connection is out of sync or hostile, so it is closed.
public enum CastFrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The length prefix announces a body larger than ``CastFrameLimits/maxBodySize``.
    case bodyTooLarge(size: UInt32, limit: Int)
    /// The length prefix is 0; an empty `CastMessage` is never valid.
    case emptyBody
    /// The connection ended in the middle of a frame.
    case truncated(expected: Int, received: Int)

    public var description: String {
        switch self {
        case .bodyTooLarge(let size, let limit):
            return "frame body of \(size) bytes exceeds the \(limit)-byte limit"
        case .emptyBody:
            return "frame with a 0-byte body"
        case .truncated(let expected, let received):
            return "connection closed inside a frame: \(received) of \(expected) bytes received"
        }
    }

    /// The announced size, for logs.
    public var announcedSize: Int {
        switch self {
        case .bodyTooLarge(let size, _): return Int(size)
        case .emptyBody: return 0
        case .truncated(let expected, _): return expected
        }
    }
}
