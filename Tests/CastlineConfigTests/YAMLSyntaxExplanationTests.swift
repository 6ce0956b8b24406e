import CastlineConfig
import Testing

/// A bad indent is named as one, at file:line:column, with a hint, and libyaml's own text after
/// it (before, only libyaml's text was printed).
@Suite struct YAMLSyntaxExplanationTests {
    func error(_ text: String) -> String {
        do {
            _ = try CastlineConfiguration.parse(text, file: "c.yaml")
            return ""
        } catch {
            return error.diagnostics.map(\.description).joined(separator: "\n")
        }
    }

    static let hint = "check that keys of one mapping line up, and items of one list too (spaces only)"

    @Test("a key deeper than the key above it reads as part of that key's value")
    func keyDeeperThanTheOneAbove() {
        #expect(error("jobs:\n  - name: x\n     devices: y\n") == "c.yaml:3:13: error: YAML syntax: inconsistent indentation: "
                + "\"devices: y\" (column 6) is deeper than \"- name: x\" on line 2 (column 5), so it reads as part of that value; "
                + Self.hint + " (libyaml: mapping values are not allowed in this context)")
        // Without a deeper key, the other cause: a plain value with ": " in it.
        #expect(error("title: Lobby: main\n") == "c.yaml:1:13: error: YAML syntax: a value holds \": \" (a colon and a space) on line 1: "
                + "quote the value, or " + Self.hint + " (libyaml: mapping values are not allowed in this context)")
    }

    @Test("a key that lines up with no mapping names the columns around it")
    func keyBetweenLevels() {
        #expect(error("daemon:\n    on_stop: leave\n  jobs_file: /x\n") == "c.yaml:3:3: error: YAML syntax: inconsistent indentation: "
                + "\"jobs_file: /x\" starts at column 3, the line above (2) at column 5, and the mapping it is in (line 1) has its keys "
                + "at column 1; " + Self.hint + " (libyaml: did not find expected key while parsing a block mapping at 1:1)")
        #expect(error("jobs:\n  - name: x\n   devices: y\n") == "c.yaml:3:4: error: YAML syntax: inconsistent indentation: "
                + "\"devices: y\" starts at column 4, the line above (2) at column 5, and the list it is in (line 2) has its items "
                + "at column 3; " + Self.hint + " (libyaml: did not find expected '-' indicator while parsing a block collection at 2:3)")
    }

    @Test("list items out of line, a list where a key belongs, a tab")
    func listsAndTabs() {
        #expect(error("devices:\n  - name: a\n    host: b\n - name: c\n") == "c.yaml:4:2: error: YAML syntax: inconsistent indentation: "
                + "the list item \"- name: c\" starts at column 2, the item on line 2 at column 3; items of one list start at the same "
                + "column (libyaml: did not find expected key while parsing a block mapping at 1:1)")
        #expect(error("jobs:\n  name: a\n  - x\n").contains("YAML syntax: a list item \"- x\" where a key of the mapping above was expected"))
        #expect(error("daemon:\n\ton_stop: leave\n") == "c.yaml:2:1: error: YAML syntax: a tab in the indentation of line 2: YAML indents "
                + "with spaces only; replace the tab with spaces (libyaml: found character that cannot start any token while scanning "
                + "for the next token at 2:1)")
    }

    @Test("other syntax errors keep libyaml's text")
    func othersUnchanged() {
        #expect(error("a: [1, 2\nb: 3\n").hasPrefix("c.yaml:2:2: error: YAML syntax: did not find expected ',' or ']' (while parsing a flow sequence at 1:4)"))
    }
}
