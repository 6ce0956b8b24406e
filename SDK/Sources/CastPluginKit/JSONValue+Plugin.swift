import CCastPluginABI
import CastJSON

// Plugins read and write JSON with CastJSON, the host's own JSON module (a leaf value module:
// linked into each plugin, no state shared with the host).

extension PluginError {
    /// JSON the host handed over did not parse: status `CASTLINE_ERR_INVALID_JSON`, and the
    /// parser's message (`invalid JSON at byte 17: expected ':' after object key`).
    public init(_ error: JSONParseError) {
        self.init(error.description, status: Int32(CASTLINE_ERR_INVALID_JSON.rawValue))
    }
}

extension JSONValue {
    /// Parses JSON a plugin receives from the host (options, a session, a message); a syntax
    /// error becomes a ``PluginError`` (see ``PluginError/init(_:)``).
    public static func parsePluginInput(_ text: String) throws(PluginError) -> JSONValue {
        do throws(JSONParseError) {
            return try parse(text)
        } catch {
            throw PluginError(error)
        }
    }
}
