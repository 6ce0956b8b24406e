import CastCore

/// Credentials out of logs: the values of keys that carry them (Home Assistant Cast's
/// `refreshToken`, a LOAD's `credentials`, tokens and passwords) become `"<redacted>"` wherever
/// they sit in a JSON payload. castline's traffic log and the simulator's frame log write
/// payloads through it.
public enum PayloadRedaction {
    /// Keys whose string values are secrets, compared without case.
    static let secretKeys: Set<String> = [
        "refreshtoken", "accesstoken", "refresh_token", "access_token", "token", "password", "credentials",
        "authorization", "secret", "client_secret",
    ]

    public static let placeholder = "<redacted>"

    /// `json` with every secret value replaced (objects and arrays walked to the bottom).
    public static func redacted(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let object):
            var out = JSONObject()
            for (key, value) in object {
                if secretKeys.contains(key.lowercased()), !value.isNull, value.object == nil, value.array == nil {
                    out.append(key: key, value: .string(placeholder))
                } else {
                    out.append(key: key, value: redacted(value))
                }
            }
            return .object(out)
        case .array(let items):
            return .array(items.map(redacted))
        default:
            return json
        }
    }

    /// A payload's text with its secrets replaced; text that names no secret key (the usual
    /// case: one substring scan) or is not JSON comes back as it was.
    public static func redacted(text: String) -> String {
        let lowered = text.lowercased()
        guard secretKeys.contains(where: { lowered.contains("\"\($0)\"") }), let json = try? JSONValue.parse(text) else { return text }
        return redacted(json).serialized()
    }
}
