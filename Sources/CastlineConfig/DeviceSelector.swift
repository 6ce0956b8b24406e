import CastLogging

/// What `--device` and job `devices:` entries match: a device's name, one of its config aliases
/// or its id, exactly or by glob (`Lobby*`, `Kitchen ?`). Pure.
package struct DeviceSelector: Sendable, CustomStringConvertible {
    package let text: String
    let glob: GlobPattern?

    /// Throws when `text` has glob syntax errors (`Lobby[`).
    package init(_ text: String) throws(GlobSyntaxError) {
        self.text = text
        let hasGlob = text.contains { $0 == "*" || $0 == "?" || $0 == "[" }
        glob = hasGlob ? try GlobPattern(text) : nil
    }

    /// True for a glob: it may match several devices, so callers wait for discovery to settle.
    package var isGlob: Bool { glob != nil }

    package func matches(name: String, id: String, aliases: [String] = []) -> Bool {
        let names = [name, id] + aliases
        if let glob { return names.contains { glob.matches($0) } }
        return names.contains { $0 == text || $0.lowercased() == text.lowercased() }
    }

    package var description: String { text }
}
