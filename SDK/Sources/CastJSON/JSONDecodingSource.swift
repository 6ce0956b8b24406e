// Read access to parsed JSON for decoders: a `JSONValue` tree and the parser's tape
// (`JSONTapeValue`) both conform, so a decoder written once over `JSONDecodingSource` is
// specialized for each and reads the tape without building the tree first.

/// Read access to parsed JSON, as the payload models need it.
///
/// The requirements do not throw: the throwing helpers (CastCore's `decodeInt(_:)`,
/// `modelObject()`, …) are extension methods over them. A requirement with typed throws is called through the
/// witness table even in a decoder specialized for a concrete source (the optimizer does not
/// devirtualize it), which cost a call per member.
@usableFromInline package protocol JSONDecodingSource {
    associatedtype Object: JSONDecodingObject where Object.MemberValue == Self
    associatedtype Elements: Sequence where Elements.Element == Self

    /// `true` for `null`.
    var isNull: Bool { get }
    /// The value as a `JSONValue` (free-form members, error messages, models without a
    /// generic decoder).
    var jsonValue: JSONValue { get }
    /// The members, or nil when this is not an object.
    var objectMembers: Object? { get }
    /// The elements, or nil when this is not an array.
    func arrayElements() -> Elements?
    /// The value's kind and, unless it is a string or a container, the value.
    var scalar: JSONScalar { get }
    /// The string, or nil when the value is not a string.
    var stringValue: String? { get }
}

/// A JSON value's kind, with the value for literals and numbers (trivial: no reference counting
/// on the way; strings come from ``JSONDecodingSource/stringValue``).
@usableFromInline package enum JSONScalar {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string
    case container
}

/// The members of an object, in wire order (``member(_:)`` finds the first with a key).
@usableFromInline package protocol JSONDecodingObject: Sequence where Element == (key: MemberKey, value: MemberValue) {
    associatedtype MemberKey: JSONMemberKey
    associatedtype MemberValue
}

/// An object member's key as a model's decoder sees it: matched against the names the model
/// knows (`switch key { case "playerState": … }`) byte for byte, without building a `String`
/// (JSON compares keys by their code points, not by Unicode canonical equivalence).
@usableFromInline package protocol JSONMemberKey {
    /// Whether the key's UTF-8 bytes are exactly `name`'s.
    func equals(_ name: StaticString) -> Bool
    /// The key as a `String` (for members a model keeps as they came, and for errors).
    var string: String { get }
}

/// Lets a `switch` over a member key use string-literal patterns.
@inlinable @inline(__always)
package func ~= <Key: JSONMemberKey>(name: StaticString, key: Key) -> Bool {
    key.equals(name)
}

/// A `String` matched against literals byte for byte, as decoders match keys: the keys of a
/// `JSONValue` object (``JSONObjectMembers``), and string values a decoder dispatches on
/// (`switch JSONStringKey(type) { case "PING": … }`). A `switch` over a `String` itself would
/// compare by Unicode canonical equivalence ("\u{212A}" equals "K").
@usableFromInline
package struct JSONStringKey: JSONMemberKey {
    @usableFromInline package let string: String

    @inlinable @inline(__always)
    package init(_ string: String) { self.string = string }

    @inlinable @inline(__always)
    package func equals(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { nameBytes in
            let utf8 = string.utf8
            guard utf8.count == nameBytes.count else { return false }
            guard let base = nameBytes.baseAddress, !nameBytes.isEmpty else { return true }
            return utf8.withContiguousStorageIfAvailable { memcmpBytes($0.baseAddress.unsafelyUnwrapped, base, nameBytes.count) }
                ?? utf8.elementsEqual(nameBytes)
        }
    }
}

extension JSONDecodingObject {
    /// The value of the first member named `name` (compared byte for byte).
    @inlinable @inline(__always)
    package func member(_ name: StaticString) -> MemberValue? {
        for (key, value) in self where key.equals(name) { return value }
        return nil
    }
}

/// The members of a `JSONValue` object as a decoder reads them: keys are ``JSONStringKey``s.
@usableFromInline
package struct JSONObjectMembers: JSONDecodingObject {
    @usableFromInline package typealias MemberKey = JSONStringKey
    @usableFromInline package typealias MemberValue = JSONValue

    /// The object itself (for decoders that keep members as they came).
    @usableFromInline package let jsonObject: JSONObject

    @inlinable @inline(__always)
    package init(_ jsonObject: JSONObject) { self.jsonObject = jsonObject }

    @usableFromInline
    package struct Iterator: IteratorProtocol {
        @usableFromInline var base: JSONObject.Iterator

        @inlinable @inline(__always)
        init(base: JSONObject.Iterator) { self.base = base }

        @inlinable @inline(__always)
        package mutating func next() -> (key: JSONStringKey, value: JSONValue)? {
            guard let (key, value) = base.next() else { return nil }
            return (key: JSONStringKey(key), value: value)
        }
    }

    @inlinable @inline(__always)
    package func makeIterator() -> Iterator { Iterator(base: jsonObject.makeIterator()) }

    @inlinable @inline(__always)
    package var underestimatedCount: Int { jsonObject.count }
}

extension JSONValue: JSONDecodingSource {
    @inlinable @inline(__always)
    package var jsonValue: JSONValue { self }

    @inlinable @inline(__always)
    package func arrayElements() -> [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    @inlinable @inline(__always)
    package var objectMembers: JSONObjectMembers? {
        if case .object(let object) = self { return JSONObjectMembers(object) }
        return nil
    }

    @inlinable @inline(__always)
    package var scalar: JSONScalar {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(value)
        case .double(let value): return .double(value)
        case .string: return .string
        case .array, .object: return .container
        }
    }

    @inlinable @inline(__always)
    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
