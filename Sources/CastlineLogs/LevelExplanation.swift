import CastCore
import CastLogging

/// `castline logs explain CLASS`: replays how castline applies rule layers (config, then
/// `CASTLINE_LOG`, then `--log`; each replaces the rules before it, and its bare level, if any,
/// the minimum) on a real ``LoggerFilter`` and reports the decision with its source. Pure.
package struct LevelExplanation: Sendable {
    package struct Layer: Sendable {
        package var source: String
        package var text: String
        package var rules: [LogRule]
        package var minimumLevel: LogLevel?
    }

    package var className: String
    package var function: String
    package var layers: [Layer]
    package var decision: LogLevelDecision
    /// Where the minimum level came from ("default" when no layer set one).
    package var minimumSource: String
    package var minimumLevel: LogLevel
    /// Earlier rules of the active layer that match too (overridden: the last match wins).
    package var overridden: [(index: Int, rule: LogRule)]

    package struct LayerError: Error, CustomStringConvertible {
        package var source: String
        package var error: LogRuleSyntaxError
        package var description: String { "\(source): \(error)" }
    }

    package static func explain(className: String, function: String = "", layers input: [(source: String, rules: String)],
                               defaultMinimum: LogLevel) throws(LayerError) -> LevelExplanation {
        let filter = LoggerFilter(minimumLevel: defaultMinimum)
        var layers: [Layer] = []
        var minimumSource = "default"
        for (source, text) in input {
            let set: LogRuleSet
            do { set = try LogRuleParser.parse(text) } catch { throw LayerError(source: source, error: error) }
            filter.replaceRules(with: set)
            if set.minimumLevel != nil { minimumSource = source }
            layers.append(Layer(source: source, text: text, rules: set.rules, minimumLevel: set.minimumLevel))
        }
        let decision = filter.explain(className: className, function: function)
        let rules = filter.rules
        var overridden: [(Int, LogRule)] = []
        for (index, rule) in rules.enumerated() where index != decision.ruleIndex {
            let subject = rule.target == .className ? className : function
            if rule.pattern.matches(subject), index < (decision.ruleIndex ?? -1) { overridden.append((index, rule)) }
        }
        return LevelExplanation(className: className, function: function, layers: layers, decision: decision,
                                minimumSource: minimumSource, minimumLevel: filter.minimumLevel, overridden: overridden)
    }

    /// The layer whose rules are active (the last one), if any.
    package var activeLayer: Layer? { layers.last }

    /// What kind of layer a source is: `file` (the config's logging.rules), `environment`
    /// (`CASTLINE_LOG`), `command line` (`--log`), `runtime change` (`castline log-level`, the API:
    /// the daemon's `api` layer), `default` (no layer).
    package static func layerKind(_ source: String) -> String {
        switch source {
        case LogSystem.environmentVariable: return "environment"
        case "--log": return "command line"
        case "api": return "runtime change"
        case "default": return "default"
        default: return "file"
        }
    }

    /// `--log (command line)`, `api (runtime change: castline log-level or the API)`.
    static func described(_ source: String) -> String {
        let kind = layerKind(source)
        return kind == "runtime change" ? "\(source) (runtime change: castline log-level or the API)" : "\(source) (\(kind))"
    }

    package var text: String {
        var out: [String] = []
        let subject = function.isEmpty ? className : "\(className) in \(function)"
        out.append("\(subject): \(decision.level.name)" + (decision.level == .none ? " (nothing is logged)" : " and more severe records are logged"))
        if let rule = decision.rule, let index = decision.ruleIndex, let layer = activeLayer {
            out.append("  decided by rule #\(index + 1) '\(rule)' from \(Self.described(layer.source)): the last rule that matches wins")
        } else {
            out.append("  no rule matches: the minimum level \(minimumLevel.name) applies (set by \(Self.described(minimumSource)))")
        }
        for (index, rule) in overridden {
            out.append("  also matches, overridden by a later rule: #\(index + 1) '\(rule)'")
        }
        if layers.isEmpty {
            out.append("  no rules configured (config logging.rules, CASTLINE_LOG and --log are all unset)")
        }
        for (i, layer) in layers.enumerated() {
            let state = i == layers.count - 1 ? "active" : "replaced by \(layers[i + 1].source)"
            out.append("  layer \(i + 1): \(Self.described(layer.source)) \"\(layer.text)\" (\(state))")
        }
        return out.joined(separator: "\n")
    }

    package var json: JSONValue {
        var o: JSONObject = ["class": .string(className), "level": .string(decision.level.name),
                             "minimumLevel": .string(minimumLevel.name), "minimumSource": .string(minimumSource)]
        if !function.isEmpty { o.set("function", .string(function)) }
        if let rule = decision.rule, let index = decision.ruleIndex {
            o.set("rule", ["index": .int(Int64(index + 1)), "text": .string(rule.description),
                           "source": .string(activeLayer?.source ?? ""), "layer": .string(Self.layerKind(activeLayer?.source ?? ""))])
        } else {
            o.set("rule", .null)
        }
        o.set("overridden", .array(overridden.map { ["index": .int(Int64($0.index + 1)), "text": .string($0.rule.description)] }))
        o.set("minimumLayer", .string(Self.layerKind(minimumSource)))
        o.set("layers", .array(layers.map { ["source": .string($0.source), "layer": .string(Self.layerKind($0.source)), "rules": .string($0.text)] }))
        return .object(o)
    }
}
