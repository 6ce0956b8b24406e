/// Why a parsed JSON payload does not fit a Cast model, and where.
///
/// `path` locates the offending value from the payload root; the description reads
/// `status[0].mediaSessionId: expected an integer, found "abc"`.
public struct CastPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One step of a ``CastPayloadError/path``: an object key or an array index.
    public enum PathComponent: Sendable, Hashable, CustomStringConvertible {
        case key(String)
        case index(Int)

        public var description: String {
            switch self {
            case .key(let key): return key
            case .index(let index): return "[\(index)]"
            }
        }
    }

    /// From the payload root to the offending value; empty for the root itself.
    public var path: [PathComponent]
    /// What was wrong ("expected an integer, found \"abc\"", "missing required key").
    public var reason: String

    public init(path: [PathComponent] = [], reason: String) {
        self.path = path
        self.reason = reason
    }

    /// The path in `a.b[0].c` form; `$` for the root.
    public var pathDescription: String {
        guard !path.isEmpty else { return "$" }
        var text = ""
        for component in path {
            switch component {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += key
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    public var description: String { "\(pathDescription): \(reason)" }

    /// The same error seen from one level further out.
    public func prefixed(with component: PathComponent) -> CastPayloadError {
        CastPayloadError(path: [component] + path, reason: reason)
    }

    /// "expected <expected>, found <short rendering of value>".
    public static func typeMismatch(expected: String, found value: JSONValue, key: String? = nil) -> CastPayloadError {
        CastPayloadError(path: key.map { [.key($0)] } ?? [], reason: "expected \(expected), found \(render(value))")
    }

    /// A required key is absent (or null).
    public static func missingKey(_ key: String) -> CastPayloadError {
        CastPayloadError(path: [.key(key)], reason: "missing required key")
    }

    /// A short rendering of a JSON value for error messages: scalars as JSON (strings cut at 40
    /// characters), containers by kind.
    static func render(_ value: JSONValue) -> String {
        switch value {
        case .array: return "an array"
        case .object: return "an object"
        case .string(let text) where text.count > 40:
            return JSONValue.string(String(text.prefix(40))).serialized() + "…"
        default: return value.serialized()
        }
    }
}
