import CastlineLocalMedia

extension ControlError {
    /// A local-media refusal answered with the same kind and code (`path_not_allowed` a 403,
    /// `unreadable_file` a 400, `no_route` a 503, `serve_failed` a 500).
    package init(_ refusal: LocalMediaError) {
        let kind: Kind
        switch refusal.kind {
        case .usage: kind = .usage
        case .forbidden: kind = .forbidden
        case .unavailable: kind = .unavailable
        case .internal: kind = .internal
        }
        self.init(kind, refusal.code, refusal.message)
    }

    /// Runs a local-media step in a command: its refusal is the command's error.
    package static func localMedia<T>(_ body: () throws(LocalMediaError) -> T) throws(ControlError) -> T {
        do { return try body() } catch { throw ControlError(error) }
    }

    /// Runs a local-media step in a command: its refusal is the command's error.
    package static func localMedia<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(LocalMediaError) -> T
    ) async throws(ControlError) -> T {
        do { return try await body() } catch { throw ControlError(error) }
    }
}
