// Internal encoding helpers shared by the payload models: append a member only when the
// value is present. Keys written by one model are distinct, so no duplicate check is needed.

extension JSONObject {
    @inline(__always)
    mutating func put(_ key: String, _ value: JSONValue?) {
        if let value { append(key: key, value: value) }
    }

    @inline(__always)
    mutating func put(_ key: String, _ value: String?) {
        if let value { append(key: key, value: .string(value)) }
    }

    @inline(__always)
    mutating func put(_ key: String, _ value: Int?) {
        if let value { append(key: key, value: .int(Int64(value))) }
    }

    @inline(__always)
    mutating func put(_ key: String, _ value: Double?) {
        if let value { append(key: key, value: .double(value)) }
    }

    @inline(__always)
    mutating func put(_ key: String, _ value: Bool?) {
        if let value { append(key: key, value: .bool(value)) }
    }

    @inline(__always)
    mutating func put(_ key: String, _ value: RequestID?) {
        if let value { append(key: key, value: .int(Int64(value.rawValue))) }
    }

    @inline(__always)
    mutating func put<E: OpenStringEnum>(_ key: String, _ value: E?) {
        if let value { append(key: key, value: .string(value.rawValue)) }
    }

    @inline(__always)
    mutating func put<E: OpenIntEnum>(_ key: String, _ value: E?) {
        if let value { append(key: key, value: .int(Int64(value.rawValue))) }
    }

    @inline(__always)
    mutating func put<M: CastPayloadModel>(_ key: String, _ value: M?) {
        if let value { append(key: key, value: value.json) }
    }

    mutating func put<M: CastPayloadModel>(_ key: String, _ values: [M]?) {
        if let values { append(key: key, value: .array(values.map(\.json))) }
    }

    mutating func put(_ key: String, _ values: [Int]?) {
        if let values { append(key: key, value: .array(values.map { .int(Int64($0)) })) }
    }

    mutating func put(_ key: String, _ values: [String]?) {
        if let values { append(key: key, value: .array(values.map { .string($0) })) }
    }

    /// Starts a message object with its `type` (and `requestId` when given).
    static func message(_ type: String, requestID: RequestID? = nil, capacity: Int = 4) -> JSONObject {
        var object = JSONObject()
        object.reserveCapacity(capacity)
        object.append(key: "type", value: .string(type))
        object.put("requestId", requestID)
        return object
    }
}

extension JSONObject {
    /// `{"type": type, …members}`; an existing `type` member is replaced.
    func withType(_ type: String) -> JSONValue {
        var result = JSONObject.message(type, capacity: count + 1)
        for (key, value) in self where key != "type" { result.append(key: key, value: value) }
        return .object(result)
    }

    /// The members other than `type`.
    func removingType() -> JSONObject {
        JSONObject(lazy.filter { $0.key != "type" })
    }

    /// `requestId` of a payload kept as raw members (nil when absent or not an integer).
    var embeddedRequestID: RequestID? {
        guard let id = self["requestId"]?.int else { return nil }
        return RequestID(rawValue: Int(truncatingIfNeeded: id))
    }
}
