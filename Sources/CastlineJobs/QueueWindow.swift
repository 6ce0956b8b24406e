/// A playlist longer than a device's queue should hold, a window at a time (pure): the first
/// ``size`` items are loaded, and as the device plays towards the window's end the next items
/// are appended and the played ones removed, so the device never holds more than ``size``. A
/// playlist that fits is loaded whole, with the device's own repeat mode.
package struct QueueWindow: Sendable, Equatable {
    /// Items the device is given at most (castline's default: 50).
    package static let defaultSize = 50

    package let count: Int
    package let size: Int
    /// Wrap around at the end (repeat all) instead of stopping.
    package let wraps: Bool
    /// Playlist indices on the device, in queue order.
    package private(set) var loaded: [Int]
    /// Whether the playlist fits the window (then the device repeats it itself).
    package var fits: Bool { count <= size }

    /// `start`: the playlist index to begin at (a playlist resumed where it was). A playlist that
    /// fits is loaded whole (the device starts at `start`); a longer one's window begins there.
    package init(count: Int, size: Int = QueueWindow.defaultSize, wraps: Bool, start: Int = 0) {
        self.count = count
        self.size = max(4, size)
        self.wraps = wraps
        let size = max(4, size)
        guard count > size, start > 0, start < count else {
            loaded = Array(0..<min(count, size))
            return
        }
        let ahead = Array(start..<min(count, start + size))
        loaded = wraps ? ahead + Array(0..<(size - ahead.count)) : ahead
    }

    /// The queue position the device starts at for playlist index `start`.
    package func position(of start: Int) -> Int { loaded.firstIndex(of: start) ?? 0 }

    /// The item at queue position `position` plays: the playlist indices to append, and how
    /// many items to remove from the queue's front (played ones only). Appends come a quarter
    /// window before the end, half a window at a time.
    package mutating func advance(playing position: Int) -> (append: [Int], removeFront: Int) {
        guard !fits, position >= 0, position < loaded.count, loaded.count - position <= max(1, size / 4) else { return ([], 0) }
        var append: [Int] = []
        var next = loaded[loaded.count - 1] + 1
        while append.count < max(1, size / 2) {
            if next == count {
                guard wraps else { break }
                next = 0
            }
            append.append(next)
            next += 1
        }
        let removeFront = min(position, max(0, loaded.count + append.count - size))
        loaded = Array(loaded.dropFirst(removeFront)) + append
        return (append, removeFront)
    }
}
