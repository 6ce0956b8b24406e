import CastCore

/// Why a control command failed, in the words every face gives it: an HTTP status, an exit code
/// and a stable `code` for programs, and a message that says what to fix.
package struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// The request is malformed: a wrong argument, an unknown key, a value out of range (400, exit 64).
        case usage
        /// No such device, job or route (404, exit 3).
        case notFound
        /// The request is well-formed but conflicts with the state (409, exit 4): a job the config
        /// owns, no media app running.
        case conflict
        /// The device refused (422, exit 4): LOAD_FAILED, INVALID_PLAYER_STATE, LAUNCH_ERROR.
        case refused
        /// The device cannot be reached or did not answer (503, exit 1).
        case unavailable
        /// Not allowed: a missing or wrong token, a namespace the config does not allow (401/403, exit 1).
        case unauthorized
        case forbidden
        /// A body over the limit (413, exit 64).
        case tooLarge
        /// A local file that is no media castline serves (415, exit 4).
        case unsupportedMedia
        /// A route asked with a method it does not take (405, exit 64).
        case methodNotAllowed
        /// castline itself failed (500, exit 1).
        case `internal`
    }

    package let kind: Kind
    package let message: String
    /// A stable identifier for programs (`unknown_device`, `volume_not_percent`, …).
    package let code: String

    package init(_ kind: Kind, _ code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    package static func usage(_ code: String, _ message: String) -> ControlError { ControlError(.usage, code, message) }

    package var httpStatus: Int {
        switch kind {
        case .usage: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .conflict: return 409
        case .methodNotAllowed: return 405
        case .tooLarge: return 413
        case .unsupportedMedia: return 415
        case .refused: return 422
        case .internal: return 500
        case .unavailable: return 503
        }
    }

    /// The CLI's exit code for this failure (the codes `castline --help` lists).
    package var exitCode: Int32 {
        switch kind {
        case .usage, .tooLarge, .methodNotAllowed: return 64
        case .notFound: return 3
        case .conflict, .refused, .unsupportedMedia: return 4
        case .unavailable, .unauthorized, .forbidden, .internal: return 1
        }
    }

    /// `{"error": {"code", "message", "status"}}`.
    package var json: JSONValue {
        ["error": ["code": .string(code), "message": .string(message), "status": .int(Int64(httpStatus))]]
    }

    /// The error an API reply carries, or nil when the JSON is not one.
    package init?(json: JSONValue) {
        guard let error = json["error"], let code = error["code"]?.string, let message = error["message"]?.string,
              let status = error["status"]?.int else { return nil }
        let kind: Kind
        switch status {
        case 400: kind = .usage
        case 401: kind = .unauthorized
        case 403: kind = .forbidden
        case 404: kind = .notFound
        case 405: kind = .methodNotAllowed
        case 409: kind = .conflict
        case 413: kind = .tooLarge
        case 415: kind = .unsupportedMedia
        case 422: kind = .refused
        case 503: kind = .unavailable
        default: kind = .internal
        }
        self.init(kind, code, message)
    }

    package var description: String { message }
}
