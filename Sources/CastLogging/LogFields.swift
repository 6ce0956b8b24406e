/// A structured field value carried by a ``LogRecord``.
public enum LogValue: Sendable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByStringInterpolation,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// Any integer.
    public static func int<T: BinaryInteger>(_ value: T) -> LogValue { .int(Int64(truncatingIfNeeded: value)) }

    public var description: String {
        switch self {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        }
    }
}

/// Ordered structured fields of a record (`device`, `session`, `namespace`, `requestId`, …).
///
/// Keys keep their insertion order; setting an existing key replaces its value in place.
/// Value type; cheap when empty (no allocation).
public struct LogFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: LogValue)

    /// One key/value pair (a struct, not a tuple: cheaper to copy and destroy).
    @usableFromInline struct Field: Sendable, Hashable {
        @usableFromInline var key: String
        @usableFromInline var value: LogValue
        @inlinable init(key: String, value: LogValue) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var storage: [Field]

    @inlinable public init() { storage = [] }

    public init(dictionaryLiteral elements: (String, LogValue)...) {
        storage = []
        storage.reserveCapacity(elements.count)
        for (key, value) in elements { storage.append(Field(key: key, value: value)) }
        // A literal with a repeated key keeps the last value, in the first key's place.
        if storage.count > 1 {
            for i in 1..<storage.count
            where storage[..<i].contains(where: { $0.key.utf8.count == storage[i].key.utf8.count && $0.key == storage[i].key }) {
                var deduplicated = LogFields()
                for field in storage { deduplicated[field.key] = field.value }
                self = deduplicated
                return
            }
        }
    }

    public var isEmpty: Bool { storage.isEmpty }
    public var count: Int { storage.count }
    public var keys: [String] { storage.map(\.key) }

    public subscript(key: String) -> LogValue? {
        get { storage.first(where: { $0.key == key })?.value }
        set {
            if let index = storage.firstIndex(where: { $0.key == key }) {
                if let newValue { storage[index].value = newValue } else { storage.remove(at: index) }
            } else if let newValue {
                storage.append(Field(key: key, value: newValue))
            }
        }
    }

    /// Fields of `self` followed by `other`; `other` wins on equal keys.
    public func merging(_ other: LogFields) -> LogFields {
        if other.isEmpty { return self }
        if isEmpty { return other }
        var result = self
        for (key, value) in other { result[key] = value }
        return result
    }

    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Field]>
        public mutating func next() -> Element? { base.next().map { ($0.key, $0.value) } }
    }

    public func makeIterator() -> Iterator { Iterator(base: storage.makeIterator()) }

    /// Calls `body` for each field in order, borrowing keys and values (no tuple copies: the
    /// cheap way for sinks to walk fields).
    @inlinable
    public func forEachField(_ body: (String, LogValue) throws -> Void) rethrows {
        // Through the buffer pointer each field is borrowed: no retain and release of its
        // strings per visit.
        try storage.withUnsafeBufferPointer { fields in
            for i in fields.indices { try body(fields[i].key, fields[i].value) }
        }
    }
}
