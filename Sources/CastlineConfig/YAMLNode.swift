/// A position in a source file: 1-based line and column (columns count characters).
public struct SourceMark: Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// One node of a parsed YAML document with the place it starts, so every config error can name
/// file:line:column. Scalars keep their text and whether they were quoted: the schema decides
/// what a scalar means (a quoted `"8009"` stays a string; `no` in a string field stays `no`).
package struct YAMLNode: Sendable {
    package enum Content: Sendable {
        /// `plain` is false for quoted and block scalars (`"…"`, `'…'`, `|`, `>`).
        case scalar(String, plain: Bool)
        case sequence([YAMLNode])
        case mapping([YAMLPair])
    }

    package var content: Content
    package var mark: SourceMark
    /// An explicit tag (`!!str`), if any.
    package var tag: String?

    package init(_ content: Content, mark: SourceMark, tag: String? = nil) {
        self.content = content
        self.mark = mark
        self.tag = tag
    }

    /// A plain `~`, `null`, `Null`, `NULL` or empty scalar (`key:` with nothing after it).
    package var isNull: Bool {
        guard case .scalar(let text, true) = content, tag == nil else { return false }
        return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    /// What this node is, for error messages: "a mapping", "a list", "a string", "null".
    package var kindDescription: String {
        switch content {
        case .scalar: return isNull ? "null" : scalarPreview
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The scalar's text shortened and quoted for messages (`not "abc"`), as the user wrote it.
    var scalarPreview: String {
        guard case .scalar(let text, _) = content else { return "" }
        let short = text.count > 40 ? String(text.prefix(37)) + "…" : text
        return "\"\(short)\""
    }
}

/// A key and its value in a YAML mapping.
package struct YAMLPair: Sendable {
    package var key: YAMLNode
    package var value: YAMLNode

    package init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}
