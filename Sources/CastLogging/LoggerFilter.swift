import Synchronization

/// The GCKLoggerFilter model: a minimum level, an ordered list of class and function glob rules
/// where **the last matching rule wins** (GStreamer `GST_DEBUG` semantics), and message patterns.
///
/// Precedence, stated once: for a record from class `C` in function `F`, walk the rules from the
/// last to the first; the first rule whose glob matches (`C` for class rules, `F` for function
/// rules) gives the threshold. If none matches, ``minimumLevel`` applies. A threshold of `none`
/// passes nothing. If message patterns are set, a record that passed the threshold is kept only
/// when at least one pattern matches its message.
///
/// Thread-safe. Every change bumps ``generation``; ``Logger`` caches per-class thresholds and
/// recomputes them when the generation moves, so a disabled statement costs a compare.
public final class LoggerFilter: Sendable {
    @usableFromInline let generationCounter: Atomic<UInt64>
    private let state: Mutex<Snapshot>

    /// An immutable view of the filter at one generation.
    public struct Snapshot: Sendable {
        public let generation: UInt64
        public let minimumLevel: LogLevel
        public let rules: [LogRule]
        public let messagePatterns: [MessagePattern]
    }

    /// Creates a filter. The default minimum level is `info`.
    public init(minimumLevel: LogLevel = .info, rules: [LogRule] = [], messagePatterns: [MessagePattern] = []) {
        generationCounter = Atomic(1)
        state = Mutex(Snapshot(generation: 1, minimumLevel: minimumLevel, rules: rules, messagePatterns: messagePatterns))
    }

    /// Creates a filter from a rule string (`"warning,*Session:verbose"`).
    public convenience init(parsing ruleString: String, minimumLevel: LogLevel = .info) throws(LogRuleSyntaxError) {
        let set = try LogRuleParser.parse(ruleString)
        self.init(minimumLevel: set.minimumLevel ?? minimumLevel, rules: set.rules)
    }

    // MARK: Reading

    /// Increases on every change.
    public var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    /// The current state.
    public var snapshot: Snapshot { state.withLock { $0 } }

    public var minimumLevel: LogLevel {
        get { snapshot.minimumLevel }
        set { update { $0.minimumLevel = newValue } }
    }

    public var rules: [LogRule] { snapshot.rules }

    /// The canonical rule string of the current minimum level and rules.
    public var ruleString: String {
        let s = snapshot
        return LogRuleParser.format(minimumLevel: s.minimumLevel, rules: s.rules)
    }

    // MARK: Changing (GCK API shape)

    /// Appends one class rule per glob (GCK `setLoggingLevel:forClasses:`).
    public func setLoggingLevel(_ level: LogLevel, forClasses globs: [String]) throws(GlobSyntaxError) {
        var added: [LogRule] = []
        for glob in globs { added.append(try LogRule.forClasses(glob, level)) }
        update { $0.rules.append(contentsOf: added) }
    }

    /// Appends one function rule per glob (GCK `setLoggingLevel:forFunctions:`).
    public func setLoggingLevel(_ level: LogLevel, forFunctions globs: [String]) throws(GlobSyntaxError) {
        var added: [LogRule] = []
        for glob in globs { added.append(try LogRule.forFunctions(glob, level)) }
        update { $0.rules.append(contentsOf: added) }
    }

    /// Adds regular expressions matched against message text (GCK `addMessagePatterns:`).
    public func addMessagePatterns(_ patterns: [String]) throws(MessagePatternError) {
        var added: [MessagePattern] = []
        for p in patterns { added.append(try MessagePattern(p)) }
        update { $0.messagePatterns.append(contentsOf: added) }
    }

    /// Appends the rules of a parsed rule string; its bare level, if any, becomes the minimum.
    public func apply(_ set: LogRuleSet) {
        update {
            if let m = set.minimumLevel { $0.minimumLevel = m }
            $0.rules.append(contentsOf: set.rules)
        }
    }

    /// Replaces minimum level (if given) and all rules; message patterns are kept.
    public func replaceRules(with set: LogRuleSet) {
        update {
            if let m = set.minimumLevel { $0.minimumLevel = m }
            $0.rules = set.rules
        }
    }

    /// Removes all rules and message patterns (GCK `reset`); the minimum level stays.
    public func reset() {
        update {
            $0.rules = []
            $0.messagePatterns = []
        }
    }

    private struct Draft {
        var minimumLevel: LogLevel
        var rules: [LogRule]
        var messagePatterns: [MessagePattern]
    }

    private func update(_ change: (inout Draft) -> Void) {
        state.withLock { snapshot in
            var draft = Draft(minimumLevel: snapshot.minimumLevel, rules: snapshot.rules, messagePatterns: snapshot.messagePatterns)
            change(&draft)
            let next = snapshot.generation &+ 1
            snapshot = Snapshot(generation: next, minimumLevel: draft.minimumLevel, rules: draft.rules, messagePatterns: draft.messagePatterns)
            generationCounter.store(next, ordering: .releasing)
        }
    }

    // MARK: Decisions

    /// The threshold for records from `className` in `function`.
    public func level(forClass className: String, function: String = "") -> LogLevel {
        explain(className: className, function: function).level
    }

    /// Which rule decided the threshold of `className` / `function`, for `castline log explain`.
    public func explain(className: String, function: String = "") -> LogLevelDecision {
        let s = snapshot
        for index in s.rules.indices.reversed() {
            let rule = s.rules[index]
            let subject = rule.target == .className ? className : function
            if rule.pattern.matches(subject) {
                return LogLevelDecision(level: rule.level, ruleIndex: index, rule: rule, generation: s.generation)
            }
        }
        return LogLevelDecision(level: s.minimumLevel, ruleIndex: nil, rule: nil, generation: s.generation)
    }

    /// True when message patterns are empty or one matches.
    public func passesMessagePatterns(_ message: String) -> Bool {
        let patterns = snapshot.messagePatterns
        return patterns.isEmpty || patterns.contains { $0.matches(message) }
    }
}

/// The outcome of a filter decision and the rule that made it.
public struct LogLevelDecision: Sendable, Equatable, CustomStringConvertible {
    /// The threshold: records below it are dropped; `none` drops all.
    public var level: LogLevel
    /// Index of the deciding rule in ``LoggerFilter/rules``; nil when the minimum level applied.
    public var ruleIndex: Int?
    public var rule: LogRule?
    public var generation: UInt64

    public var description: String {
        if let rule, let ruleIndex {
            return "\(level.name) (rule #\(ruleIndex + 1) '\(rule)', the last matching rule)"
        }
        return "\(level.name) (minimum level: no rule matches)"
    }
}

extension LoggerFilter.Snapshot {
    /// The class-level part of the decision, with the function rules that could still override it.
    func classDecision(for className: String) -> ClassDecision {
        var classRank = minimumLevel.thresholdRank
        var overriding: [LogRule] = []  // function rules after the deciding class rule, last first
        for rule in rules.reversed() {
            if rule.target == .className {
                if rule.pattern.matches(className) {
                    classRank = rule.level.thresholdRank
                    break
                }
            } else {
                overriding.append(rule)
            }
        }
        return ClassDecision(generation: generation, classRank: classRank, functionRules: overriding,
                             hasMessagePatterns: !messagePatterns.isEmpty)
    }
}

/// What a class handle caches: the threshold from class rules plus the function rules that may
/// override it for particular functions.
struct ClassDecision: Sendable {
    let generation: UInt64
    let classRank: UInt8
    let functionRules: [LogRule]
    let hasMessagePatterns: Bool

    /// The lowest threshold any function of this class can have: below it, nothing is logged.
    var lowerBound: UInt8 { functionRules.reduce(classRank) { min($0, $1.level.thresholdRank) } }

    func rank(forFunction function: StaticString) -> UInt8 {
        for rule in functionRules where rule.pattern.matches(function) { return rule.level.thresholdRank }
        return classRank
    }

    func rank(forFunction function: String) -> UInt8 {
        for rule in functionRules where rule.pattern.matches(function) { return rule.level.thresholdRank }
        return classRank
    }
}
