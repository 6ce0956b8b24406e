/// A JSON value as it travels in a Cast message payload.
///
/// Value type, `Sendable`; safe to share across isolation domains. Numbers keep their lexical
/// kind: an integer literal that fits `Int64` is `.int`, anything else is `.double`. Objects keep
/// their keys in wire order (see ``JSONObject``). Parse with ``parse(_:)``, write with
/// ``serialized()``.
///
/// Equality is structural and order-sensitive for objects; `.int(1)` and `.double(1)` are
/// different values (use the ``double`` / ``int`` accessors to compare numerically).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

// MARK: - Typed accessors

extension JSONValue {
    /// `true` for `.null`.
    @inlinable
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The string, or nil when this is not `.string`.
    @inlinable
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer; also accepts a `.double` with an integral value inside `Int64`'s range.
    @inlinable
    public var int: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number as a `Double`; also accepts `.int` ("integers where floats are expected").
    @inlinable
    public var double: Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        default: return nil
        }
    }

    /// The boolean, or nil when this is not `.bool`.
    @inlinable
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, or nil when this is not `.array`.
    @inlinable
    public var array: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, or nil when this is not `.object`.
    @inlinable
    public var object: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The first value stored under `key`; nil when this is not an object or the key is missing.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index`; nil when this is not an array or the index is out of range.
    @inlinable
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// A short English name of the value's kind, used in error messages ("a string", "an object").
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int: return "an integer"
        case .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral {
    @inlinable
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    @inlinable
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    @inlinable
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    @inlinable
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    @inlinable
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    @inlinable
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        object.reserveCapacity(elements.count)
        for (key, value) in elements { object.append(key: key, value: value) }
        self = .object(object)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialization (same as ``serialized()``).
    public var description: String { serialized() }
}
