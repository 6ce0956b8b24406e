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

    @usableFromInline var storage: [Element]

    @inlinable public init() { storage = [] }

    public init(dictionaryLiteral elements: (String, LogValue)...) {
        storage = []
        storage.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
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
                storage.append((key, newValue))
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

    public func makeIterator() -> IndexingIterator<[Element]> { storage.makeIterator() }

    public static func == (lhs: LogFields, rhs: LogFields) -> Bool {
        lhs.storage.elementsEqual(rhs.storage) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for (key, value) in storage {
            hasher.combine(key)
            hasher.combine(value)
        }
    }
}
