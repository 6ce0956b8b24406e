/// A Cast JSON payload (or part of one) that converts to and from ``JSONValue``.
///
/// Conformers are value types. `init(json:)` is tolerant (missing optional keys, integers where
/// doubles go, `"true"`/`"false"` strings where booleans go, unknown keys and unknown enum
/// strings) and throws ``CastPayloadError`` with a path for values that cannot be meant. `json`
/// re-encodes; `Self(json: x.json) == x` holds for every value.
public protocol CastPayloadModel: Sendable, Equatable {
    /// Decodes from a parsed JSON value.
    init(json: JSONValue) throws(CastPayloadError)
    /// Encodes to JSON, keys in a stable order, optional members omitted when nil.
    var json: JSONValue { get }
}

extension CastPayloadModel {
    /// The compact JSON text of ``json``.
    public func serialized() -> String { json.serialized() }
}
