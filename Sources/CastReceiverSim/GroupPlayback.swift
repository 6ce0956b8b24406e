/// Which members of a speaker group play its media: the simulator's group bookkeeping, pure.
///
/// A group cast plays on every member that has not left; a member that casts on its own leaves
/// until the group's playback ends; when the group stops, every member is idle again. Members are
/// device indexes. Value type.
public struct GroupPlayback: Sendable, Equatable {
    /// The group's media is BUFFERING, PLAYING or PAUSED.
    public private(set) var isPlaying = false
    /// Members that left the current playback.
    public private(set) var left: Set<Int> = []

    public init() {}

    /// The group started or stopped playing: the members whose playback changes with it, in
    /// order (every member that has not left; all of them when it stops). Nil: no change.
    public mutating func playbackChanged(playing: Bool, members: [Int]) -> [Int]? {
        guard playing != isPlaying else { return nil }
        isPlaying = playing
        if playing { return members.filter { !left.contains($0) } }
        left = []
        return members
    }

    /// Member `index` cast on its own: true when that took it out of the group's playback.
    public mutating func memberLeft(_ index: Int, members: [Int]) -> Bool {
        guard isPlaying, members.contains(index) else { return false }
        return left.insert(index).inserted
    }

    /// A new member plays along at once when the group plays.
    public func joinsPlaying(_ index: Int) -> Bool { isPlaying && !left.contains(index) }

    /// Member `index` is no member any more.
    public mutating func removed(_ index: Int) { left.remove(index) }
}
