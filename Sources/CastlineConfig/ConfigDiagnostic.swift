/// One problem in a config file, at file:line:column, in the form compilers use
/// (`castline.yaml:12:5: error: unknown key "devise" in jobs[0]; allowed: devices, media, …`).
public struct ConfigDiagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Severity: String, Sendable { case error, warning }

    package var file: String
    public var mark: SourceMark
    package var severity: Severity
    package var message: String

    package init(file: String, mark: SourceMark, severity: Severity = .error, message: String) {
        self.file = file
        self.mark = mark
        self.severity = severity
        self.message = message
    }

    public var description: String { "\(file):\(mark.line):\(mark.column): \(severity.rawValue): \(message)" }
}

/// All the problems found in one file; thrown when there is at least one error.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ConfigDiagnostic]
    /// What could be decoded despite the errors (nil when the YAML itself did not parse), so a
    /// checker can go on and report more (e.g. unknown sink types) in one run.
    package var partial: CastlineConfiguration?

    package init(_ diagnostics: [ConfigDiagnostic], partial: CastlineConfiguration? = nil) {
        self.diagnostics = diagnostics
        self.partial = partial
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
