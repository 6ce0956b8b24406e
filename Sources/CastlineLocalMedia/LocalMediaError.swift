/// Why a local file is not served: outside `media.roots`, unreadable, no address that reaches the
/// device, no port to serve on. The hub answers it as a `ControlError` of the same kind and code
/// (`path_not_allowed` is a 403, `unreadable_file` a 400, `no_route` a 503, `serve_failed` a 500).
package struct LocalMediaError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// The request names a file that cannot be read.
        case usage
        /// The file is outside the allowed roots.
        case forbidden
        /// The device cannot be reached from here, or castline is stopping.
        case unavailable
        /// castline could not serve it (no free port).
        case `internal`
    }

    package let kind: Kind
    /// A stable identifier for programs (`path_not_allowed`, `unreadable_file`, …).
    package let code: String
    package let message: String

    package init(_ kind: Kind, _ code: String, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    package static func usage(_ code: String, _ message: String) -> LocalMediaError { LocalMediaError(.usage, code, message) }

    package var description: String { message }
}
