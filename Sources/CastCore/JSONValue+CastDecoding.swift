// Internal decoding helpers shared by the payload models. Every helper returns nil for JSON
// `null` (an optional member sent as null is treated as absent) and throws a
// `CastPayloadError` whose path is the member key.
//
// The helpers work on any `JSONDecodingSource`: a `JSONValue` tree, or a `JSONTapeValue` (a
// borrowed view of the parser's output, used by `CastPayload.decode(namespace:utf8:)` so the
// hot models decode without building the tree first). Models that conform to
// `JSONSourceDecodable` are written once, generically, and specialized for both.

/// Read access to parsed JSON, as the payload models need it.
protocol JSONDecodingSource {
    associatedtype Object: JSONDecodingObject where Object.MemberValue == Self
    associatedtype Elements: Sequence where Elements.Element == Self

    /// `true` for `null`.
    var isNull: Bool { get }
    /// The value as a `JSONValue` (free-form members, error messages, models without a
    /// generic decoder).
    var jsonValue: JSONValue { get }
    /// The object of a model; throws "expected an object" otherwise.
    func modelObject() throws(CastPayloadError) -> Object
    /// The elements, or nil when this is not an array.
    func arrayElements() -> Elements?
    func decodeString(_ key: String?) throws(CastPayloadError) -> String?
    /// Integers; doubles with an integral value are accepted.
    func decodeInt(_ key: String?) throws(CastPayloadError) -> Int?
    /// Numbers; integers are accepted ("currentTime": 0).
    func decodeDouble(_ key: String?) throws(CastPayloadError) -> Double?
    /// Booleans; the strings "true" / "false" are accepted (VLC sends `"autoplay":"false"`).
    func decodeBool(_ key: String?) throws(CastPayloadError) -> Bool?
}

/// The members of an object, in wire order, and lookup of the first member with a key.
protocol JSONDecodingObject: Sequence where Element == (key: MemberKey, value: MemberValue) {
    associatedtype MemberKey: JSONMemberKey
    associatedtype MemberValue
    subscript(key: String) -> MemberValue? { get }
}

/// An object member's key as a model's decoder sees it: matched against the names the model
/// knows (`switch key { case "playerState": … }`) byte for byte, without building a `String`
/// (JSON compares keys by their code points, not by Unicode canonical equivalence).
protocol JSONMemberKey {
    /// Whether the key's UTF-8 bytes are exactly `name`'s.
    func equals(_ name: StaticString) -> Bool
    /// The key as a `String` (for members a model keeps as they came, and for errors).
    var string: String { get }
}

/// Lets a `switch` over a member key use string-literal patterns.
@inline(__always)
func ~= <Key: JSONMemberKey>(name: StaticString, key: Key) -> Bool {
    key.equals(name)
}

extension String: JSONMemberKey {
    @inline(__always)
    func equals(_ name: StaticString) -> Bool {
        name.withUTF8Buffer { nameBytes in utf8.count == nameBytes.count && utf8.elementsEqual(nameBytes) }
    }

    @inline(__always)
    var string: String { self }
}

extension JSONDecodingObject {
    /// The value of the first member named `name` (compared byte for byte).
    @inline(__always)
    func member(_ name: StaticString) -> MemberValue? {
        for (key, value) in self where key.equals(name) { return value }
        return nil
    }
}

/// A model whose decoder is written once over any ``JSONDecodingSource``.
protocol JSONSourceDecodable: CastPayloadModel {
    init<Source: JSONDecodingSource>(source: Source) throws(CastPayloadError)
}

extension JSONObject: JSONDecodingObject {
    typealias MemberKey = String
    typealias MemberValue = JSONValue
}

extension JSONValue: JSONDecodingSource {
    @inline(__always)
    var jsonValue: JSONValue { self }

    @inline(__always)
    func arrayElements() -> [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// The object of a model; throws "expected an object" otherwise.
    @inline(__always)
    func modelObject() throws(CastPayloadError) -> JSONObject {
        if case .object(let object) = self { return object }
        throw .typeMismatch(expected: "an object", found: self)
    }

    func decodeString(_ key: String?) throws(CastPayloadError) -> String? {
        switch self {
        case .string(let value): return value
        case .null: return nil
        default: throw .typeMismatch(expected: "a string", found: self, key: key)
        }
    }

    /// Integers; doubles with an integral value are accepted.
    func decodeInt(_ key: String?) throws(CastPayloadError) -> Int? {
        switch self {
        case .int(let value): return Int(truncatingIfNeeded: value)  // Int is 64-bit on every supported platform
        case .double(let value):
            if let integer = Int(exactly: value) { return integer }
            throw .typeMismatch(expected: "an integer", found: self, key: key)
        case .null: return nil
        default: throw .typeMismatch(expected: "an integer", found: self, key: key)
        }
    }

    /// Numbers; integers are accepted ("currentTime": 0).
    func decodeDouble(_ key: String?) throws(CastPayloadError) -> Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .null: return nil
        default: throw .typeMismatch(expected: "a number", found: self, key: key)
        }
    }

    /// Booleans; the strings "true" / "false" are accepted (VLC sends `"autoplay":"false"`).
    func decodeBool(_ key: String?) throws(CastPayloadError) -> Bool? {
        switch self {
        case .bool(let value): return value
        case .string("true"): return true
        case .string("false"): return false
        case .null: return nil
        default: throw .typeMismatch(expected: "a boolean", found: self, key: key)
        }
    }
}

extension JSONDecodingSource {
    /// Any JSON except null, kept as is (customData and other free-form members).
    @inline(__always)
    func decodeAny() -> JSONValue? {
        if isNull { return nil }
        return jsonValue
    }

    func decodeRequestID(_ key: String = "requestId") throws(CastPayloadError) -> RequestID? {
        try decodeInt(key).map(RequestID.init(rawValue:))
    }

    func decodeEnum<E: OpenStringEnum>(_ key: String, as type: E.Type = E.self) throws(CastPayloadError) -> E? {
        try decodeString(key).map(E.init(rawValue:))
    }

    func decodeIntEnum<E: OpenIntEnum>(_ key: String, as type: E.Type = E.self) throws(CastPayloadError) -> E? {
        try decodeInt(key).map(E.init(rawValue:))
    }

    func decodeModel<M: CastPayloadModel>(_ key: String, as type: M.Type = M.self) throws(CastPayloadError) -> M? {
        if isNull { return nil }
        do {
            return try M(json: jsonValue)
        } catch {
            throw error.prefixed(with: .key(key))
        }
    }

    func decodeModel<M: JSONSourceDecodable>(_ key: String, as type: M.Type = M.self) throws(CastPayloadError) -> M? {
        if isNull { return nil }
        do {
            return try M(source: self)
        } catch {
            throw error.prefixed(with: .key(key))
        }
    }

    @inline(__always)
    func decodeArray<T>(
        _ key: String, _ element: (Self) throws(CastPayloadError) -> T
    ) throws(CastPayloadError) -> [T]? {
        guard let values = arrayElements() else {
            if isNull { return nil }
            throw .typeMismatch(expected: "an array", found: jsonValue, key: key)
        }
        var result: [T] = []
        result.reserveCapacity(values.underestimatedCount)
        var index = 0
        for value in values {
            do {
                result.append(try element(value))
            } catch {
                throw error.prefixed(with: .index(index)).prefixed(with: .key(key))
            }
            index &+= 1
        }
        return result
    }

    func decodeModels<M: CastPayloadModel>(_ key: String, as type: M.Type = M.self) throws(CastPayloadError) -> [M]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> M in try M(json: value.jsonValue) }
    }

    func decodeModels<M: JSONSourceDecodable>(_ key: String, as type: M.Type = M.self) throws(CastPayloadError) -> [M]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> M in try M(source: value) }
    }

    func decodeInts(_ key: String) throws(CastPayloadError) -> [Int]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> Int in
            guard let integer = try value.decodeInt(nil) else { throw .typeMismatch(expected: "an integer", found: value.jsonValue) }
            return integer
        }
    }

    func decodeStrings(_ key: String) throws(CastPayloadError) -> [String]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> String in
            guard let text = try value.decodeString(nil) else { throw .typeMismatch(expected: "a string", found: value.jsonValue) }
            return text
        }
    }
}

/// Throws "missing required key" when `value` is nil.
@inline(__always)
func requireKey<T>(_ value: T?, _ key: String) throws(CastPayloadError) -> T {
    guard let value else { throw .missingKey(key) }
    return value
}
