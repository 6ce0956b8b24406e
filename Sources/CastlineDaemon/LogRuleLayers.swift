import CastLogging

/// The layers of log rules a daemon runs with, in the order castline applies them, each replacing
/// the rules before it: the config's `logging.rules`, `CASTLINE_LOG`, `--log`, then rules set
/// through the API. A reload changes the config layer and applies them all again, so the layers
/// above it stay in force and `logs explain` (which replays the same layers) still matches.
package struct LogRuleLayers: Sendable, Equatable {
    package var config: String?
    package var configSource: String
    package var environment: String?
    package var commandLine: String?
    package var api: String?
    /// The minimum level before any layer (the console's default).
    package var defaultMinimum: LogLevel

    package init(config: String?, configSource: String, environment: String?, commandLine: String?, defaultMinimum: LogLevel) {
        self.config = config
        self.configSource = configSource
        self.environment = environment
        self.commandLine = commandLine
        self.defaultMinimum = defaultMinimum
    }

    /// `(source, rules)` of each layer that is set, in order.
    package var layers: [(source: String, rules: String)] {
        var result: [(String, String)] = []
        if let config { result.append((configSource, config)) }
        if let environment { result.append((LogSystem.environmentVariable, environment)) }
        if let commandLine { result.append(("--log", commandLine)) }
        if let api { result.append(("api", api)) }
        return result
    }

    /// Applies every layer from the default minimum up. A layer that does not parse is skipped
    /// (logged by the log system) and the ones after it still apply.
    package func apply(to system: LogSystem) {
        system.filter.replaceRules(with: LogRuleSet(minimumLevel: defaultMinimum, rules: []))
        for (source, rules) in layers { try? system.applyRules(rules, source: source) }
    }
}
