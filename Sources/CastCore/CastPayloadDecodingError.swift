/// Why ``CastPayload/decode(namespace:utf8:)`` failed: bad JSON or a JSON payload that does not
/// fit the namespace's model. The description names the namespace:
/// `urn:x-cast:com.google.cast.media: status[0].mediaSessionId: expected an integer, found "abc"`.
public struct CastPayloadDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The underlying failure.
    public enum Failure: Sendable, Equatable {
        case json(JSONParseError)
        case payload(CastPayloadError)
    }

    /// The message's namespace.
    public var namespace: CastNamespace
    public var failure: Failure

    public init(namespace: CastNamespace, failure: Failure) {
        self.namespace = namespace
        self.failure = failure
    }

    /// The JSON error, when the text was not valid JSON.
    public var jsonError: JSONParseError? {
        if case .json(let error) = failure { return error }
        return nil
    }

    /// The model error, when the JSON did not fit.
    public var payloadError: CastPayloadError? {
        if case .payload(let error) = failure { return error }
        return nil
    }

    public var description: String {
        switch failure {
        case .json(let error): return "\(namespace): \(error)"
        case .payload(let error): return "\(namespace): invalid payload at \(error)"
        }
    }
}
