/// One `pattern:level` rule of a ``LoggerFilter``.
///
/// `target` says whether the glob is matched against the emitting class name or the function
/// name (`#function`). In rule strings a function rule is written with a leading `@`:
/// `@*heartbeat*:verbose`.
public struct LogRule: Sendable, Hashable, CustomStringConvertible {
    /// What a rule's glob is matched against.
    public enum Target: Sendable, Hashable { case className, function }

    public var target: Target
    public var pattern: GlobPattern
    public var level: LogLevel

    public init(_ target: Target = .className, pattern: GlobPattern, level: LogLevel) {
        self.target = target
        self.pattern = pattern
        self.level = level
    }

    /// Builds a class rule, compiling `glob`.
    public static func forClasses(_ glob: String, _ level: LogLevel) throws(GlobSyntaxError) -> LogRule {
        LogRule(.className, pattern: try GlobPattern(glob), level: level)
    }

    /// Builds a function rule, compiling `glob`.
    public static func forFunctions(_ glob: String, _ level: LogLevel) throws(GlobSyntaxError) -> LogRule {
        LogRule(.function, pattern: try GlobPattern(glob), level: level)
    }

    /// The rule in rule-string form (`*Session:verbose`, `@send*:debug`).
    public var description: String {
        (target == .function ? "@" : "") + pattern.source + ":" + level.name
    }
}
