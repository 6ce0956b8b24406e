/// A growable byte buffer written through a raw pointer: the encoder reserves once per record
/// (an upper bound of the record's size) and then writes without per-byte capacity or uniqueness
/// checks. Single-threaded; owned by one ``JSONSink``.
struct LineBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 4096)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }

    /// Unchecked: call ``reserve(_:)`` first.
    @inline(__always)
    mutating func put(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    /// Unchecked: call ``reserve(_:)`` first.
    @inline(__always)
    mutating func put(_ bytes: UnsafeRawPointer, _ n: Int) {
        (base + count).update(from: bytes.assumingMemoryBound(to: UInt8.self), count: n)
        count += n
    }

    @inline(__always)
    mutating func put(_ s: StaticString) {
        put(UnsafeRawPointer(s.utf8Start), s.utf8CodeUnitCount)
    }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
}
