/// Reads typed values out of YAML nodes against a schema and collects every problem with its
/// position instead of stopping at the first, so `castline config check` lists them all.
///
/// A wrong value is reported and the field is left at its default: decoding always finishes.
/// Not thread-safe; one reader per file.
package final class ConfigReader {
    package let file: String
    package private(set) var diagnostics: [ConfigDiagnostic] = []

    package init(file: String) { self.file = file }

    package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    package func error(_ mark: SourceMark, _ message: String) {
        diagnostics.append(ConfigDiagnostic(file: file, mark: mark, message: message))
    }

    package func warning(_ mark: SourceMark, _ message: String) {
        diagnostics.append(ConfigDiagnostic(file: file, mark: mark, severity: .warning, message: message))
    }

    /// A view of `node` as a mapping whose keys must be among `allowed` (nil: any key); unknown
    /// keys are reported with the allowed keys and the closest match. `path` names the place in
    /// messages (`jobs[0].media`); nil when `node` is not a mapping (reported).
    package func mapping(_ node: YAMLNode, path: String, allowed: [String]?) -> ConfigMapping? {
        guard case .mapping(let pairs) = node.content else {
            if node.isNull { return ConfigMapping(reader: self, node: node, path: path, pairs: []) }
            error(node.mark, "\(Self.name(path)) must be a mapping (key: value lines), not \(node.kindDescription)")
            return nil
        }
        var kept: [YAMLPair] = []
        for pair in pairs {
            guard case .scalar(let key, _) = pair.key.content else { continue }
            guard let allowed else { kept.append(pair); continue }
            if allowed.contains(key) {
                kept.append(pair)
            } else {
                var message = "unknown key \"\(key)\" in \(Self.name(path))"
                if let near = Self.closest(to: key, in: allowed) { message += " (did you mean \"\(near)\"?)" }
                message += "; allowed: " + allowed.joined(separator: ", ")
                error(pair.key.mark, message)
            }
        }
        return ConfigMapping(reader: self, node: node, path: path, pairs: kept)
    }

    static func name(_ path: String) -> String { path.isEmpty ? "the top level" : path }

    /// The allowed key nearest to a misspelling (edit distance ≤ 2, or a prefix/suffix relation).
    package static func closest(to key: String, in allowed: [String]) -> String? {
        var best: (String, Int)?
        for candidate in allowed {
            let distance = editDistance(Array(key.lowercased().utf8), Array(candidate.utf8))
            if distance <= max(1, min(2, candidate.count / 3)), distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
    /// transpositions (`prot` → `port` is 1).
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    // MARK: Scalars.

    /// Any scalar as text (numbers and booleans too: `port: 8009` read as a string is "8009").
    package func string(_ node: YAMLNode, path: String) -> String? {
        guard case .scalar(let text, _) = node.content, !node.isNull else {
            error(node.mark, "\(path) must be a string, not \(node.kindDescription)")
            return nil
        }
        return text
    }

    package func int(_ node: YAMLNode, path: String, range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let text, true) = node.content, let value = Int(text.replacingUnderscores) else {
            error(node.mark, "\(path) must be a whole number between \(range.lowerBound) and \(range.upperBound), not \(node.kindDescription)")
            return nil
        }
        guard range.contains(value) else {
            error(node.mark, "\(path) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
            return nil
        }
        return value
    }

    /// A number of seconds or other decimal: `5`, `2.5`, `0.25`.
    package func double(_ node: YAMLNode, path: String, range: ClosedRange<Double>, unit: String = "") -> Double? {
        let suffix = unit.isEmpty ? "" : " \(unit)"
        guard case .scalar(let text, true) = node.content, let value = Double(text.replacingUnderscores), value.isFinite else {
            // "retry_delay must be a number of seconds between 0.1 and 3600, not "abc"".
            let what = unit.isEmpty ? "a number" : "a number of \(unit)"
            error(node.mark, "\(path) must be \(what) between \(range.lowerBound.compact) and \(range.upperBound.compact), not \(node.kindDescription)")
            return nil
        }
        guard range.contains(value) else {
            error(node.mark, "\(path) must be between \(range.lowerBound.compact) and \(range.upperBound.compact)\(suffix), not \(text)")
            return nil
        }
        return value
    }

    /// `true` or `false` only (YAML 1.1's yes/no/on/off are refused: they surprise people).
    package func bool(_ node: YAMLNode, path: String) -> Bool? {
        if case .scalar(let text, true) = node.content {
            switch text {
            case "true", "True", "TRUE": return true
            case "false", "False", "FALSE": return false
            default: break
            }
        }
        error(node.mark, "\(path) must be true or false, not \(node.kindDescription)")
        return nil
    }

    /// One of a fixed set of words.
    package func choice(_ node: YAMLNode, path: String, among choices: [String]) -> String? {
        guard case .scalar(let text, _) = node.content, choices.contains(text) else {
            error(node.mark, "\(path) must be one of \(choices.joined(separator: ", ")), not \(node.kindDescription)")
            return nil
        }
        return text
    }

    /// A list of strings; a single scalar counts as a list of one.
    package func strings(_ node: YAMLNode, path: String) -> [String]? {
        switch node.content {
        case .scalar:
            if node.isNull { return [] }
            return string(node, path: path).map { [$0] }
        case .sequence(let items):
            var values: [String] = []
            for (index, item) in items.enumerated() {
                if let value = string(item, path: "\(path)[\(index)]") { values.append(value) }
            }
            return values
        case .mapping:
            error(node.mark, "\(path) must be a list of strings, not a mapping")
            return nil
        }
    }

    /// The items of a list (a null value is an empty list).
    package func list(_ node: YAMLNode, path: String) -> [YAMLNode]? {
        if node.isNull { return [] }
        guard case .sequence(let items) = node.content else {
            error(node.mark, "\(path) must be a list (lines starting with \"- \"), not \(node.kindDescription)")
            return nil
        }
        return items
    }
}

/// A mapping already checked for unknown keys; `ConfigReader` reports type errors per key.
package struct ConfigMapping {
    let reader: ConfigReader
    package let node: YAMLNode
    package let path: String
    let pairs: [YAMLPair]

    package func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The value node of `key` (nil when absent or null).
    package func value(_ key: String) -> YAMLNode? {
        guard let pair = pairs.first(where: { if case .scalar(key, _) = $0.key.content { true } else { false } }),
              !pair.value.isNull else { return nil }
        return pair.value
    }

    /// The key node itself (its position), when present.
    package func keyMark(_ key: String) -> SourceMark? {
        pairs.first(where: { if case .scalar(key, _) = $0.key.content { true } else { false } })?.key.mark
    }

    /// Reports a missing required key at the mapping.
    package func require(_ key: String) -> YAMLNode? {
        guard let node = value(key) else {
            reader.error(node.mark, "\(ConfigReader.name(path)) needs \"\(key)\"")
            return nil
        }
        return node
    }

    package func string(_ key: String) -> String? { value(key).flatMap { reader.string($0, path: child(key)) } }
    package func int(_ key: String, _ range: ClosedRange<Int>) -> Int? { value(key).flatMap { reader.int($0, path: child(key), range: range) } }
    package func double(_ key: String, _ range: ClosedRange<Double>, unit: String = "") -> Double? {
        value(key).flatMap { reader.double($0, path: child(key), range: range, unit: unit) }
    }
    package func bool(_ key: String) -> Bool? { value(key).flatMap { reader.bool($0, path: child(key)) } }
    package func choice(_ key: String, _ choices: [String]) -> String? { value(key).flatMap { reader.choice($0, path: child(key), among: choices) } }
    package func strings(_ key: String) -> [String]? { value(key).flatMap { reader.strings($0, path: child(key)) } }
    package func list(_ key: String) -> [YAMLNode]? { value(key).flatMap { reader.list($0, path: child(key)) } }

    /// All pairs with scalar keys (for free-form mappings such as per-plugin configs).
    package var entries: [(key: String, mark: SourceMark, value: YAMLNode)] {
        pairs.compactMap { pair in
            guard case .scalar(let key, _) = pair.key.content else { return nil }
            return (key, pair.key.mark, pair.value)
        }
    }
}

extension String {
    /// YAML allows `1_000`.
    var replacingUnderscores: String { contains("_") ? String(filter { $0 != "_" }) : self }
}

extension Double {
    /// `5` rather than `5.0` in messages.
    var compact: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
