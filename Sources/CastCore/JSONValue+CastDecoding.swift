// Internal decoding helpers shared by the payload models. Every helper returns nil for JSON
// `null` (an optional member sent as null is treated as absent) and throws a
// `CastPayloadError` whose path is the member key.
//
// The helpers work on any `JSONDecodingSource`: a `JSONValue` tree, or a `JSONTapeValue` (a
// borrowed view of the parser's output, used by `CastPayload.decode(namespace:utf8:)` so the
// hot models decode without building the tree first). Models that conform to
// `JSONSourceDecodable` are written once, generically, and specialized for both.

/// A model whose decoder is written once over any ``JSONDecodingSource``.
protocol JSONSourceDecodable: CastPayloadModel {
    init<Source: JSONDecodingSource>(source: Source) throws(CastPayloadError)
}

extension JSONDecodingSource {
    /// The object of a model; throws "expected an object" otherwise.
    @inline(__always)
    func modelObject() throws(CastPayloadError) -> Object {
        guard let object = objectMembers else { throw .typeMismatch(expected: "an object", found: jsonValue) }
        return object
    }

    @inline(__always)
    func decodeString(_ key: String?) throws(CastPayloadError) -> String? {
        if let value = stringValue { return value }
        if isNull { return nil }
        throw .typeMismatch(expected: "a string", found: jsonValue, key: key)
    }

    /// Integers; doubles with an integral value are accepted.
    @inline(__always)
    func decodeInt(_ key: String?) throws(CastPayloadError) -> Int? {
        switch scalar {
        case .int(let value): return Int(truncatingIfNeeded: value)  // Int is 64-bit on every supported platform
        case .double(let value):
            if let integer = Int(exactly: value) { return integer }
            throw .typeMismatch(expected: "an integer", found: jsonValue, key: key)
        case .null: return nil
        default: throw .typeMismatch(expected: "an integer", found: jsonValue, key: key)
        }
    }

    /// Numbers; integers are accepted ("currentTime": 0).
    @inline(__always)
    func decodeDouble(_ key: String?) throws(CastPayloadError) -> Double? {
        switch scalar {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .null: return nil
        default: throw .typeMismatch(expected: "a number", found: jsonValue, key: key)
        }
    }

    /// Booleans; the strings "true" / "false" are accepted (VLC sends `"autoplay":"false"`).
    @inline(__always)
    func decodeBool(_ key: String?) throws(CastPayloadError) -> Bool? {
        switch scalar {
        case .bool(let value): return value
        case .null: return nil
        case .string:
            switch stringValue {
            case "true": return true
            case "false": return false
            default: throw .typeMismatch(expected: "a boolean", found: jsonValue, key: key)
            }
        default: throw .typeMismatch(expected: "a boolean", found: jsonValue, key: key)
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
