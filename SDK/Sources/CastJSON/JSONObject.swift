/// An ordered JSON object: key/value pairs in wire order.
///
/// Value type, `Sendable`. Lookup is a linear scan that returns the **first** pair with the key
/// (Cast objects are small; a scan beats hashing at these sizes and keeps the order). The parser
/// keeps duplicate keys as they appear; ``subscript(_:)`` setters and ``set(_:_:)`` keep at most
/// one pair per key. Equality and hashing are order-sensitive.
public struct JSONObject: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// One member of the object.
    public typealias Element = (key: String, value: JSONValue)

    /// Stored member. A struct rather than a tuple: arrays of structs are destroyed through a
    /// compiled value witness, arrays of tuples through the slow generic runtime path.
    @usableFromInline
    internal struct Member: Sendable {
        @usableFromInline var key: String
        @usableFromInline var value: JSONValue

        @inlinable
        init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline
    internal var storage: [Member]

    @inlinable
    internal init(members: [Member]) { storage = members }

    /// An empty object.
    @inlinable
    public init() { storage = [] }

    /// An object holding `entries` in the given order (duplicates are kept).
    public init(_ entries: some Sequence<Element>) { storage = entries.map { Member(key: $0.key, value: $0.value) } }

    /// An object from a literal, in source order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        storage = []
        storage.reserveCapacity(elements.count)
        for (key, value) in elements { storage.append(Member(key: key, value: value)) }
    }

    /// Number of members (duplicates included).
    @inlinable
    public var count: Int { storage.count }

    /// `true` when the object has no members.
    @inlinable
    public var isEmpty: Bool { storage.isEmpty }

    /// Keys in stored order (duplicates included).
    public var keys: [String] { storage.map(\.key) }

    /// Values in stored order.
    public var values: [JSONValue] { storage.map(\.value) }

    /// The members in stored order.
    @inlinable
    public var entries: [Element] { storage.map { (key: $0.key, value: $0.value) } }

    /// Whether some member has `key`.
    @inlinable
    public func contains(key: String) -> Bool {
        storage.contains { $0.key == key }
    }

    /// The value of the first member named `key`. Setting replaces the first such member in
    /// place (appending when absent); setting nil removes every member named `key`.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        get {
            for entry in storage where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let newValue { set(key, newValue) } else { remove(key) }
        }
    }

    /// Replaces the first member named `key` in place, or appends one.
    public mutating func set(_ key: String, _ value: JSONValue) {
        if let index = storage.firstIndex(where: { $0.key == key }) {
            storage[index].value = value
        } else {
            storage.append(Member(key: key, value: value))
        }
    }

    /// Removes every member named `key`; returns the first removed value.
    @discardableResult
    public mutating func remove(_ key: String) -> JSONValue? {
        guard let first = storage.firstIndex(where: { $0.key == key }) else { return nil }
        let value = storage[first].value
        storage.removeAll { $0.key == key }
        return value
    }

    /// Appends a member without looking for an existing one (the parser's path; also the
    /// cheapest way to build an object whose keys are known to be distinct).
    @inlinable
    public mutating func append(key: String, value: JSONValue) {
        storage.append(Member(key: key, value: value))
    }

    /// Reserves room for `capacity` members.
    @inlinable
    public mutating func reserveCapacity(_ capacity: Int) {
        storage.reserveCapacity(capacity)
    }

    /// Iterates the members in stored order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var base: IndexingIterator<[Member]>

        @inlinable
        init(base: IndexingIterator<[Member]>) { self.base = base }

        @inlinable
        public mutating func next() -> Element? {
            guard let member = base.next() else { return nil }
            return (key: member.key, value: member.value)
        }
    }

    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(base: storage.makeIterator())
    }

    @inlinable
    public var underestimatedCount: Int { storage.count }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.storage.count == rhs.storage.count else { return false }
        for index in lhs.storage.indices {
            let left = lhs.storage[index]
            let right = rhs.storage[index]
            if left.key != right.key || left.value != right.value { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.count)
        for entry in storage {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON serialization of the object.
    public var description: String { JSONValue.object(self).serialized() }
}
