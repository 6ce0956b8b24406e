/// The `supportedMediaCommands` bitmask of a MEDIA_STATUS.
///
/// Bits come from the CAF receiver (as listed by pychromecast). Unknown bits are preserved in
/// `rawValue` and re-encoded unchanged; ``unknownBits`` isolates them.
public struct SupportedMediaCommands: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let pause = SupportedMediaCommands(rawValue: 1)
    public static let seek = SupportedMediaCommands(rawValue: 2)
    public static let streamVolume = SupportedMediaCommands(rawValue: 4)
    public static let streamMute = SupportedMediaCommands(rawValue: 8)
    /// Legacy.
    public static let skipForward = SupportedMediaCommands(rawValue: 16)
    /// Legacy.
    public static let skipBackward = SupportedMediaCommands(rawValue: 32)
    public static let queueNext = SupportedMediaCommands(rawValue: 64)
    public static let queuePrev = SupportedMediaCommands(rawValue: 128)
    public static let queueShuffle = SupportedMediaCommands(rawValue: 256)
    public static let skipAd = SupportedMediaCommands(rawValue: 512)
    public static let queueRepeatAll = SupportedMediaCommands(rawValue: 1024)
    public static let queueRepeatOne = SupportedMediaCommands(rawValue: 2048)
    /// `queueRepeatAll | queueRepeatOne` (3072).
    public static let queueRepeat = SupportedMediaCommands(rawValue: 3072)
    public static let editTracks = SupportedMediaCommands(rawValue: 4096)
    public static let playbackRate = SupportedMediaCommands(rawValue: 8192)
    public static let like = SupportedMediaCommands(rawValue: 16384)
    public static let dislike = SupportedMediaCommands(rawValue: 32768)
    public static let follow = SupportedMediaCommands(rawValue: 65536)
    public static let unfollow = SupportedMediaCommands(rawValue: 131_072)
    public static let streamTransfer = SupportedMediaCommands(rawValue: 262_144)
    /// PAUSE | SEEK | STREAM_VOLUME | STREAM_MUTE | EDIT_TRACKS | PLAYBACK_RATE (12303).
    public static let allBasicMedia = SupportedMediaCommands(rawValue: 12303)

    /// Every single-bit command with its wire name, lowest bit first.
    public static let knownBits: [(command: SupportedMediaCommands, name: String)] = [
        (.pause, "PAUSE"), (.seek, "SEEK"), (.streamVolume, "STREAM_VOLUME"), (.streamMute, "STREAM_MUTE"),
        (.skipForward, "SKIP_FORWARD"), (.skipBackward, "SKIP_BACKWARD"), (.queueNext, "QUEUE_NEXT"),
        (.queuePrev, "QUEUE_PREV"), (.queueShuffle, "QUEUE_SHUFFLE"), (.skipAd, "SKIP_AD"),
        (.queueRepeatAll, "QUEUE_REPEAT_ALL"), (.queueRepeatOne, "QUEUE_REPEAT_ONE"), (.editTracks, "EDIT_TRACKS"),
        (.playbackRate, "PLAYBACK_RATE"), (.like, "LIKE"), (.dislike, "DISLIKE"), (.follow, "FOLLOW"),
        (.unfollow, "UNFOLLOW"), (.streamTransfer, "STREAM_TRANSFER"),
    ]

    /// Mask of every documented bit.
    public static let knownMask: UInt64 = knownBits.reduce(0) { $0 | $1.command.rawValue }

    /// Bits set here that no documented command uses.
    public var unknownBits: UInt64 { rawValue & ~Self.knownMask }

    /// Wire names of the documented bits that are set, lowest bit first.
    public var names: [String] {
        Self.knownBits.filter { contains($0.command) }.map(\.name)
    }

    /// `PAUSE|SEEK|…` plus `0x…` for unknown bits; `none` when empty.
    public var description: String {
        var parts = names
        if unknownBits != 0 { parts.append("0x" + String(unknownBits, radix: 16)) }
        return parts.isEmpty ? "none" : parts.joined(separator: "|")
    }
}
