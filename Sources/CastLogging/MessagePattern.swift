/// A regular expression matched against a record's message text (GCK `addMessagePatterns:`).
///
/// Runs only after a record has passed the level check, never on the disabled path. Use inline
/// `(?i)` for case-insensitive matching.
public struct MessagePattern: @unchecked Sendable, Hashable, CustomStringConvertible {
    // Regex values are immutable and safe to match from several threads.
    private let regex: Regex<AnyRegexOutput>
    /// The pattern as written.
    public let source: String

    public init(_ source: String) throws(MessagePatternError) {
        do {
            regex = try Regex(source)
        } catch {
            throw MessagePatternError(pattern: source, reason: String(describing: error))
        }
        self.source = source
    }

    /// True when the pattern matches anywhere in `message`.
    public func matches(_ message: String) -> Bool {
        (try? regex.firstMatch(in: message)) != nil
    }

    public var description: String { source }
    public static func == (lhs: MessagePattern, rhs: MessagePattern) -> Bool { lhs.source == rhs.source }
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }
}

/// A message pattern that is not a valid regular expression.
public struct MessagePatternError: Error, Sendable, Equatable, CustomStringConvertible {
    public var pattern: String
    public var reason: String
    public var description: String { "invalid message pattern '\(pattern)': \(reason)" }
}
