import CastJSON

/// The `JSONParseError` for `text`, or nil when it parses.
func parseError(_ text: String) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(text)
        return nil
    } catch {
        return error
    }
}

/// The `JSONParseError` for raw bytes, or nil when they parse.
func parseError(bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes: bytes)
        return nil
    } catch {
        return error
    }
}
