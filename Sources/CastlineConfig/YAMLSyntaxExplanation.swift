/// libyaml's syntax errors said in the words of the mistake behind them, with a hint, for
/// `castline config check` and every command that loads a config. Most are indentation: a key
/// deeper than the key above it, a key that lines up with no mapping, a list item out of line,
/// a tab. libyaml's own text follows in parentheses. Pure.
enum YAMLSyntaxExplanation {
    /// What libyaml reported: its problem at `mark`, and the construct it was reading
    /// (`context`, started at `contextMark`).
    struct Report {
        var problem: String
        var mark: SourceMark
        var context: String?
        var contextMark: SourceMark?
    }

    static let hint = "check that keys of one mapping line up, and items of one list too (spaces only)"

    /// The message for `report` in a document of `text`.
    static func message(_ report: Report, text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var context = ""
        if let text = report.context { context = " \(text)" + (report.contextMark.map { " at \($0)" } ?? "") }
        guard let explained = explanation(report, lines: lines) else {
            return report.problem + (context.isEmpty ? "" : " (\(context.dropFirst()))")
        }
        return "\(explained) (libyaml: \(report.problem)\(context))"
    }

    static func explanation(_ report: Report, lines: [Substring]) -> String? {
        let index = report.mark.line - 1
        guard lines.indices.contains(index) else { return nil }
        let line = lines[index]
        if report.problem.hasPrefix("found character that cannot start any token"), line.contains("\t") {
            return "a tab in the indentation of line \(report.mark.line): YAML indents with spaces only; replace the tab with spaces"
        }
        guard let here = Entry(line, line: report.mark.line) else { return nil }
        let above = previousEntry(before: index, in: lines)
        switch report.problem {
        case "mapping values are not allowed in this context":
            // The line is read as the rest of the value above it: deeper than that key.
            if let above, here.keyColumn > above.keyColumn, above.hasValue {
                return "inconsistent indentation: \(here.quoted) (column \(here.keyColumn)) is deeper than \(above.quoted) "
                    + "on line \(above.line) (column \(above.keyColumn)), so it reads as part of that value; \(hint)"
            }
            return "a value holds \": \" (a colon and a space) on line \(report.mark.line): quote the value, or \(hint)"
        case "did not find expected key", "did not find expected '-' indicator":
            if here.isListItem, let item = previousListItem(before: index, in: lines), item.column != here.column {
                return "inconsistent indentation: the list item \(here.quoted) starts at column \(here.column), "
                    + "the item on line \(item.line) at column \(item.column); items of one list start at the same column"
            }
            if here.isListItem, report.problem == "did not find expected key" {
                return "a list item \(here.quoted) where a key of the mapping above was expected: a list is the value "
                    + "of a key (\"key:\" then \"- item\" lines indented under it); \(hint)"
            }
            var text = "inconsistent indentation: \(here.quoted) starts at column \(here.column)"
            if let above { text += ", the line above (\(above.line)) at column \(above.keyColumn)" }
            if let start = report.contextMark, lines.indices.contains(start.line - 1), let opener = Entry(lines[start.line - 1]) {
                text += report.problem.hasSuffix("indicator")
                    ? ", and the list it is in (line \(start.line)) has its items at column \(start.column)"
                    : ", and the mapping it is in (line \(start.line)) has its keys at column \(opener.keyColumn)"
            }
            return text + "; \(hint)"
        default:
            return nil
        }
    }

    /// A line's content: where it starts, where its key starts (after any `- `), and whether
    /// it is `key: value` (a value on the same line).
    struct Entry {
        var line = 0
        var column: Int
        var keyColumn: Int
        var isListItem: Bool
        var hasValue: Bool
        var text: Substring

        /// Nil for a blank or comment line.
        init?(_ raw: Substring, line: Int = 0) {
            let content = raw.drop { $0 == " " }
            guard let first = content.first, first != "#", first != "\r" else { return nil }
            self.line = line
            column = raw.count - content.count + 1
            var key = content
            while key.hasPrefix("- ") || key == "-" { key = key.dropFirst().drop { $0 == " " } }
            keyColumn = raw.count - key.count + 1
            isListItem = content.hasPrefix("- ") || content == "-"
            if let colon = key.firstRange(of: ": ") {
                hasValue = !key[colon.upperBound...].allSatisfy { $0 == " " || $0 == "\r" }
            } else {
                hasValue = false
            }
            text = content.hasSuffix("\r") ? content.dropLast() : content
        }

        /// The line's text in quotes, shortened.
        var quoted: String {
            let short = text.count > 40 ? String(text.prefix(37)) + "…" : String(text)
            return "\"\(short)\""
        }
    }

    static func previousEntry(before index: Int, in lines: [Substring]) -> Entry? {
        var i = index - 1
        while i >= 0 {
            if let entry = Entry(lines[i], line: i + 1) { return entry }
            i -= 1
        }
        return nil
    }

    static func previousListItem(before index: Int, in lines: [Substring]) -> Entry? {
        var i = index - 1
        while i >= 0 {
            if let entry = Entry(lines[i], line: i + 1), entry.isListItem { return entry }
            i -= 1
        }
        return nil
    }
}
