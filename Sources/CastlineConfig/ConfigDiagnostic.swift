/// One problem in a config file, at file:line:column, in the form compilers use
/// (`castline.yaml:12:5: error: unknown key "devise" in jobs[0]; allowed: devices, media, …`).
public struct ConfigDiagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var file: String
    public var mark: SourceMark
    public var severity: Severity
    public var message: String

    public init(file: String, mark: SourceMark, severity: Severity = .error, message: String) {
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
    public var partial: CastlineConfiguration?

    public init(_ diagnostics: [ConfigDiagnostic], partial: CastlineConfiguration? = nil) {
        self.diagnostics = diagnostics
        self.partial = partial
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
