/// The parsed form of a rule string such as `"info,CastChannel.*heartbeat:none,*Session:verbose"`.
public struct LogRuleSet: Sendable, Hashable {
    /// The last bare level in the string (`"warning"`), nil if none was given.
    public var minimumLevel: LogLevel?
    /// Rules in written order; the last matching one wins.
    public var rules: [LogRule]

    public init(minimumLevel: LogLevel? = nil, rules: [LogRule] = []) {
        self.minimumLevel = minimumLevel
        self.rules = rules
    }
}

/// Parses the rule grammar shared by `CASTLINE_LOG`, config files and the API.
///
/// ```
/// rules   := item ( "," item )*          whitespace around items is ignored
/// item    := level                       the minimum level (where no rule matches)
///          | "@"? glob ":" level         class rule; with "@", a function rule
/// level   := none|verbose|debug|info|warning|error|assert (aliases trace, warn, off, critical) | 0-6
/// glob    := * ? [set] \escape and literal characters (no spaces, commas or colons unescaped
///            outside a [set]); the level follows the last unescaped ':' so function names such
///            as @start(device:):debug work
/// ```
/// Errors carry the 1-based column of the offending character.
public enum LogRuleParser {
    public static func parse(_ text: String) throws(LogRuleSyntaxError) -> LogRuleSet {
        let scalars = Array(text.unicodeScalars)
        var result = LogRuleSet()
        if scalars.allSatisfy({ $0.properties.isWhitespace }) { return result }

        var itemStart = 0
        var index = 0
        var openBracket: Int?  // offset of an unclosed '['
        var items: [(start: Int, end: Int, colon: Int?)] = []
        var lastColon: Int?
        while index <= scalars.count {
            if index == scalars.count {
                items.append((itemStart, index, lastColon))
                break
            }
            let c = scalars[index]
            if c == "\\" {
                guard index + 1 < scalars.count else {
                    throw LogRuleSyntaxError(text: text, offset: index, reason: "'\\' at the end escapes nothing")
                }
                index += 2
                continue
            }
            if openBracket != nil {
                if c == "]" { openBracket = nil }
            } else if c == "[" {
                openBracket = index
            } else if c == ":" {
                lastColon = index
            } else if c == "," {
                items.append((itemStart, index, lastColon))
                itemStart = index + 1
                lastColon = nil
            }
            index += 1
        }

        if let openBracket {
            throw LogRuleSyntaxError(text: text, offset: openBracket, reason: "'[' has no closing ']'")
        }

        for item in items {
            // Trim whitespace.
            var start = item.start
            var end = min(item.end, scalars.count)
            while start < end, scalars[start].properties.isWhitespace { start += 1 }
            while end > start, scalars[end - 1].properties.isWhitespace { end -= 1 }
            guard start < end else {
                let at = item.end < scalars.count ? item.end : max(item.start - 1, 0)
                throw LogRuleSyntaxError(text: text, offset: at, reason: "empty rule (two commas, or a comma at an end)")
            }
            guard let colon = item.colon, colon >= start, colon < end else {
                // A bare level.
                let word = String(String.UnicodeScalarView(scalars[start..<end]))
                guard let level = LogLevel(parsing: word) else {
                    throw LogRuleSyntaxError(
                        text: text, offset: start,
                        reason: "unknown level '\(word)' (a bare item sets the minimum level: \(LogLevel.spellings))")
                }
                result.minimumLevel = level
                continue
            }
            // Level after the colon.
            var levelStart = colon + 1
            while levelStart < end, scalars[levelStart].properties.isWhitespace { levelStart += 1 }
            guard levelStart < end else {
                throw LogRuleSyntaxError(text: text, offset: min(colon + 1, scalars.count), reason: "missing level after ':'")
            }
            let word = String(String.UnicodeScalarView(scalars[levelStart..<end]))
            guard let level = LogLevel(parsing: word) else {
                throw LogRuleSyntaxError(text: text, offset: levelStart, reason: "unknown level '\(word)' (expected \(LogLevel.spellings))")
            }
            // Pattern before the colon.
            var patternStart = start
            var target = LogRule.Target.className
            if scalars[patternStart] == "@" {
                target = .function
                patternStart += 1
            }
            var patternEnd = colon
            while patternEnd > patternStart, scalars[patternEnd - 1].properties.isWhitespace { patternEnd -= 1 }
            guard patternStart < patternEnd else {
                throw LogRuleSyntaxError(
                    text: text, offset: colon,
                    reason: target == .function ? "missing function pattern between '@' and ':'" : "missing class pattern before ':'")
            }
            var k = patternStart
            while k < patternEnd {
                let c = scalars[k]
                if c == "\\" { k += 2; continue }
                if c.properties.isWhitespace || c.value < 0x20 || c.value == 0x7F {
                    throw LogRuleSyntaxError(text: text, offset: k, reason: "a pattern cannot contain spaces or control characters (escape with '\\')")
                }
                k += 1
            }
            let patternText = String(String.UnicodeScalarView(scalars[patternStart..<patternEnd]))
            let pattern: GlobPattern
            do {
                pattern = try GlobPattern(patternText)
            } catch {
                throw LogRuleSyntaxError(text: text, offset: patternStart + error.offset, reason: error.reason)
            }
            result.rules.append(LogRule(target, pattern: pattern, level: level))
        }
        return result
    }

    /// The canonical rule string for a minimum level and rules (parses back to the same set).
    public static func format(minimumLevel: LogLevel?, rules: [LogRule]) -> String {
        var items: [String] = []
        if let minimumLevel { items.append(minimumLevel.name) }
        items.append(contentsOf: rules.map(\.description))
        return items.joined(separator: ",")
    }
}

/// A rule string that does not parse: where (1-based `column`) and why.
///
/// `description` is one line; ``pointer`` renders the text with a caret under the offending
/// character, for terminals.
public struct LogRuleSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole rule string.
    public var text: String
    /// 0-based offset in Unicode scalars.
    public var offset: Int
    public var reason: String

    /// 1-based column of the offending character.
    public var column: Int { offset + 1 }

    public var description: String { "log rules: column \(column): \(reason)" }

    /// Two lines: the text and a caret under the offending character.
    public var pointer: String {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 ? " " : $0 }))
        return clean + "\n" + String(repeating: " ", count: offset) + "^"
    }
}
