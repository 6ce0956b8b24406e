// The payload models are written in CastJSON's values (`JSONValue`, `JSONObject`,
// `JSONParseError`): every module that uses CastCore sees them without importing CastJSON.
@_exported import CastJSON
