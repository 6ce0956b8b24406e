/// The LIFO buffer the parser collects container children in.
///
/// Children of every open container sit on one stack (array elements with an empty key); when a
/// container closes, its children are *moved* (no retain/release) into an exactly-sized array:
/// one allocation per container instead of an append-grown array's several. The first buffer is
/// caller-provided (stack memory from `withUnsafeTemporaryAllocation`); growth moves to the heap.
/// Non-copyable, so the buffer has exactly one owner; deinit destroys what is left after an error.
struct JSONParserStack: ~Copyable {
    typealias Member = JSONObject.Member

    private var base: UnsafeMutablePointer<Member>
    private(set) var count = 0
    private var capacity: Int
    private var ownsBase = false

    init(initialBuffer: UnsafeMutableBufferPointer<Member>) {
        if let start = initialBuffer.baseAddress, initialBuffer.count > 0 {
            base = start
            capacity = initialBuffer.count
        } else {
            base = UnsafeMutablePointer<Member>.allocate(capacity: 16)
            capacity = 16
            ownsBase = true
        }
    }

    deinit {
        base.deinitialize(count: count)
        if ownsBase { base.deallocate() }
    }

    @inline(__always)
    mutating func push(_ member: consuming Member) {
        if count == capacity { grow() }
        (base + count).initialize(to: member)
        count += 1
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBase = UnsafeMutablePointer<Member>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        if ownsBase { base.deallocate() }
        base = newBase
        capacity = newCapacity
        ownsBase = true
    }

    /// Moves the members from `start` to the top into a new array and pops them.
    mutating func popMembers(from start: Int) -> [Member] {
        let length = count - start
        guard length > 0 else { return [] }
        // reserveCapacity + append of moved-out elements: stays in specialized code (the
        // unsafeUninitializedCapacity initializer goes through an unspecialized runtime path with
        // a generic-metadata lookup per call) and never retains or releases.
        var result: [Member] = []
        result.reserveCapacity(length)
        for offset in start..<count { result.append((base + offset).move()) }
        count = start
        return result
    }

    /// Moves the values from `start` to the top into a new array and pops them.
    mutating func popValues(from start: Int) -> [JSONValue] {
        let length = count - start
        guard length > 0 else { return [] }
        var result: [JSONValue] = []
        result.reserveCapacity(length)
        for offset in start..<count { result.append((base + offset).move().value) }
        count = start
        return result
    }
}
