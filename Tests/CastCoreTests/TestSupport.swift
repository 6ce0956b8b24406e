import Testing
@testable import CastCore

/// Encodes `model`, serializes, re-parses and decodes; the result must equal `model`.
func expectRoundTrip<M: CastPayloadModel>(
    _ model: M, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let text = model.json.serialized()
    let reparsed = try JSONValue.parse(text)
    #expect(reparsed == model.json, "serialized JSON re-parses equal", sourceLocation: sourceLocation)
    let decoded = try M(json: reparsed)
    #expect(decoded == model, "\(text)", sourceLocation: sourceLocation)
}

/// Parses a JSON text that the test knows to be valid.
func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    try JSONValue.parse(text)
}

/// The `CastPayloadError` thrown by `body`, or nil when it did not throw.
func payloadError(_ body: () throws(CastPayloadError) -> Void) -> CastPayloadError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}
