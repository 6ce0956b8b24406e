// Internal decoding helpers shared by the payload models. Every helper returns nil for JSON
// `null` (an optional member sent as null is treated as absent) and throws a
// `CastPayloadError` whose path is the member key.

extension JSONValue {
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

    /// Any JSON except null, kept as is (customData and other free-form members).
    @inline(__always)
    func decodeAny() -> JSONValue? {
        if case .null = self { return nil }
        return self
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
        if case .null = self { return nil }
        do {
            return try M(json: self)
        } catch {
            throw error.prefixed(with: .key(key))
        }
    }

    func decodeArray<T>(
        _ key: String, _ element: (JSONValue) throws(CastPayloadError) -> T
    ) throws(CastPayloadError) -> [T]? {
        switch self {
        case .array(let values):
            var result: [T] = []
            result.reserveCapacity(values.count)
            for index in values.indices {
                do {
                    result.append(try element(values[index]))
                } catch {
                    throw error.prefixed(with: .index(index)).prefixed(with: .key(key))
                }
            }
            return result
        case .null: return nil
        default: throw .typeMismatch(expected: "an array", found: self, key: key)
        }
    }

    func decodeModels<M: CastPayloadModel>(_ key: String, as type: M.Type = M.self) throws(CastPayloadError) -> [M]? {
        switch self {
        case .array(let values):
            var result: [M] = []
            result.reserveCapacity(values.count)
            for index in values.indices {
                do {
                    result.append(try M(json: values[index]))
                } catch {
                    throw error.prefixed(with: .index(index)).prefixed(with: .key(key))
                }
            }
            return result
        case .null: return nil
        default: throw .typeMismatch(expected: "an array", found: self, key: key)
        }
    }

    func decodeInts(_ key: String) throws(CastPayloadError) -> [Int]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> Int in
            guard let integer = try value.decodeInt(nil) else { throw .typeMismatch(expected: "an integer", found: value) }
            return integer
        }
    }

    func decodeStrings(_ key: String) throws(CastPayloadError) -> [String]? {
        try decodeArray(key) { (value) throws(CastPayloadError) -> String in
            guard case .string(let text) = value else { throw .typeMismatch(expected: "a string", found: value) }
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
