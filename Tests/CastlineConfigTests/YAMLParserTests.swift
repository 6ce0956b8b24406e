import CastlineConfig
import Testing

@Suite struct YAMLParserTests {
    @Test func nodesCarryTheirLineAndColumn() throws {
        let root = try YAMLParser.parse("a: 1\nlist:\n  - x\n  - \"y\"\nmap: {k: v}\n")
        guard case .mapping(let pairs) = root.content else { Issue.record("not a mapping"); return }
        #expect(pairs.map(\.key.mark) == [SourceMark(line: 1, column: 1), SourceMark(line: 2, column: 1), SourceMark(line: 5, column: 1)])
        guard case .sequence(let items) = pairs[1].value.content else { Issue.record("not a list"); return }
        #expect(items.map(\.mark) == [SourceMark(line: 3, column: 5), SourceMark(line: 4, column: 5)])
        guard case .scalar("x", plain: true) = items[0].content, case .scalar("y", plain: false) = items[1].content else {
            Issue.record("scalars: \(items)"); return
        }
        #expect(pairs[2].value.mark == SourceMark(line: 5, column: 6))
    }

    @Test func emptyAndCommentOnlyDocumentsAreEmptyMappings() throws {
        for text in ["", "\n", "# just a comment\n"] {
            guard case .mapping(let pairs) = try YAMLParser.parse(text).content else { Issue.record("\(text)"); continue }
            #expect(pairs.isEmpty)
        }
    }

    @Test func syntaxErrorsPointAtTheProblem() {
        #expect(throws: YAMLSyntaxError.self) { try YAMLParser.parse("a: [1, 2\nb: 3\n") }
        do {
            _ = try YAMLParser.parse("a: 1\n  b: 2\n")
            Issue.record("accepted bad indentation")
        } catch {
            #expect(error.mark.line == 2)
            #expect(error.description.contains("mapping values are not allowed"))
        }
    }

    @Test func duplicateKeysAreErrorsAtTheSecondKey() {
        do {
            _ = try YAMLParser.parse("port: 1\nname: x\nport: 2\n")
            Issue.record("accepted a duplicate key")
        } catch {
            #expect(error.mark == SourceMark(line: 3, column: 1))
            #expect(error.message == "duplicate key \"port\" (first at 1:1)")
        }
    }

    @Test func aliasesExpandButAnAliasBombIsRefused() throws {
        let root = try YAMLParser.parse("base: &b {x: 1}\ncopy: *b\n")
        guard case .mapping(let pairs) = root.content, case .mapping(let copy) = pairs[1].value.content else {
            Issue.record("shape"); return
        }
        #expect(copy.count == 1)
        var bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        var previous = "a"
        for level in ["b", "c", "d", "e", "f", "g"] {
            bomb += "\(level): &\(level) [" + Array(repeating: "*\(previous)", count: 10).joined(separator: ", ") + "]\n"
            previous = level
        }
        do {
            _ = try YAMLParser.parse(bomb)
            Issue.record("expanded an alias bomb")
        } catch {
            #expect(error.message.contains("more than 100000 nodes"))
        }
        #expect(throws: YAMLSyntaxError.self) { try YAMLParser.parse("a: *nowhere\n") }
    }

    @Test func deepNestingAndSecondDocumentsAreRefused() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: YAMLSyntaxError.self) { try YAMLParser.parse(deep) }
        do {
            _ = try YAMLParser.parse("a: 1\n---\nb: 2\n")
            Issue.record("accepted two documents")
        } catch {
            #expect(error.mark.line == 2)
        }
    }

    @Test func freeFormNodesBecomeJSONWithTheCoreSchema() throws {
        let root = try YAMLParser.parse("{n: 3, f: 2.5, t: true, s: \"3\", z: ~, l: [a, 1], o: {k: no}, e: 1e3, ip: 10.0.0.1}")
        #expect(root.jsonValue.serialized()
            == #"{"n":3,"f":2.5,"t":true,"s":"3","z":null,"l":["a",1],"o":{"k":"no"},"e":1000.0,"ip":"10.0.0.1"}"#)
    }
}
