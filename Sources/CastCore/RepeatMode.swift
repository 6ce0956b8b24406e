/// Queue repeat mode (`repeatMode`, open enum).
///
/// Unknown strings are preserved: they decode as themselves and re-encode unchanged.
///
/// `REPEAT_OFF` is observed on devices; the others come from the CAF receiver (from memory).
public struct RepeatMode: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `REPEAT_OFF`: Stop after the last item.
    public static let off: RepeatMode = "REPEAT_OFF"
    /// `REPEAT_ALL`: Repeat the whole queue.
    public static let all: RepeatMode = "REPEAT_ALL"
    /// `REPEAT_SINGLE`: Repeat the current item.
    public static let single: RepeatMode = "REPEAT_SINGLE"
    /// `REPEAT_ALL_AND_SHUFFLE`: Repeat all, shuffling on each pass.
    public static let allAndShuffle: RepeatMode = "REPEAT_ALL_AND_SHUFFLE"

    public static let knownValues: [RepeatMode] = [
        .off, .all, .single, .allAndShuffle,
    ]
}
