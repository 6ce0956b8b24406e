internal import CYAML

/// A YAML syntax error at a position (from libyaml's problem mark).
package struct YAMLSyntaxError: Error, Sendable, CustomStringConvertible {
    package var mark: SourceMark
    package var message: String
    /// libyaml's own report, when it found the error (explained in ``message``).
    var report: YAMLSyntaxExplanation.Report?

    init(mark: SourceMark, message: String, report: YAMLSyntaxExplanation.Report? = nil) {
        self.mark = mark
        self.message = message
        self.report = report
    }

    package var description: String { "\(mark): \(message)" }
}

/// Parses one YAML document into `YAMLNode`s with libyaml's event API.
///
/// Bounded: anchors and aliases are resolved by copying, and a document that would expand past
/// `maximumNodes` (a "billion laughs" alias bomb), past `maximumBytes` of scalar text (one long
/// string aliased many times), or nest deeper than `maximumDepth` is refused.
/// More than one document in a file is an error (a config is one document). Duplicate keys in a
/// mapping are errors at the second occurrence. Stateless; safe from any thread.
package enum YAMLParser {
    package static let maximumNodes = 100_000
    package static let maximumDepth = 64
    /// Scalar text a document may expand to, aliases counted at their expanded size.
    package static let maximumBytes = 4 << 20

    /// Parses `text`; an empty document (or only comments) is an empty mapping. `maximumBytes`:
    /// the scalar text the document may expand to through aliases.
    package static func parse(_ text: String, maximumBytes: Int = YAMLParser.maximumBytes) throws(YAMLSyntaxError) -> YAMLNode {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { bytes = [0x0A] }
        var builder = Builder(maximumBytes: maximumBytes)
        let result: Result<YAMLNode, YAMLSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                return .failure(YAMLSyntaxError(mark: SourceMark(line: 1, column: 1), message: "libyaml could not start (out of memory)"))
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            do throws(YAMLSyntaxError) {
                return .success(try builder.run(&parser))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let node): return node
        case .failure(var error):
            if let report = error.report { error.message = YAMLSyntaxExplanation.message(report, text: text) }
            throw error
        }
    }

    private struct Frame {
        enum Kind { case sequence, mapping }
        var kind: Kind
        var mark: SourceMark
        var tag: String?
        var anchor: String?
        var items: [YAMLNode] = []
    }

    private struct Builder {
        let maximumBytes: Int
        var stack: [Frame] = []
        var anchors: [String: YAMLNode] = [:]
        var nodeCount = 0
        /// Scalar text so far, each alias at its expanded size.
        var expandedBytes = 0
        var root: YAMLNode?
        var documents = 0

        mutating func run(_ parser: inout yaml_parser_t) throws(YAMLSyntaxError) -> YAMLNode {
            // Bounded: every event consumes input or closes a structure; libyaml ends with STREAM_END.
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { throw Self.error(parser) }
                defer { yaml_event_delete(&event) }
                let mark = SourceMark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                switch event.type {
                case YAML_STREAM_END_EVENT:
                    return root ?? YAMLNode(.mapping([]), mark: SourceMark(line: 1, column: 1))
                case YAML_DOCUMENT_START_EVENT:
                    documents += 1
                    if documents > 1 {
                        throw YAMLSyntaxError(mark: mark, message: "a second YAML document (`---`): a config file holds one document")
                    }
                case YAML_SCALAR_EVENT:
                    let scalar = event.data.scalar
                    let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: Int(scalar.length)), as: UTF8.self)
                    try grow(by: Int(scalar.length), at: mark)
                    let plain = scalar.style == YAML_PLAIN_SCALAR_STYLE
                    try add(YAMLNode(.scalar(text, plain: plain), mark: mark, tag: Self.string(scalar.tag)),
                            anchor: Self.string(scalar.anchor))
                case YAML_ALIAS_EVENT:
                    let name = Self.string(event.data.alias.anchor) ?? ""
                    guard var node = anchors[name] else {
                        throw YAMLSyntaxError(mark: mark, message: "alias *\(name) names no anchor defined before it")
                    }
                    let size = Self.count(node)
                    nodeCount += size
                    guard nodeCount <= YAMLParser.maximumNodes else {
                        throw YAMLSyntaxError(mark: mark, message: "the document expands to more than \(YAMLParser.maximumNodes) nodes through aliases")
                    }
                    try grow(by: Self.bytes(node), at: mark, alias: name)
                    node.mark = mark
                    try add(node, anchor: nil, counted: true)
                case YAML_SEQUENCE_START_EVENT:
                    let start = event.data.sequence_start
                    try push(Frame(kind: .sequence, mark: mark, tag: Self.string(start.tag), anchor: Self.string(start.anchor)))
                case YAML_MAPPING_START_EVENT:
                    let start = event.data.mapping_start
                    try push(Frame(kind: .mapping, mark: mark, tag: Self.string(start.tag), anchor: Self.string(start.anchor)))
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    let frame = stack.removeLast()
                    let node: YAMLNode
                    if frame.kind == .sequence {
                        node = YAMLNode(.sequence(frame.items), mark: frame.mark, tag: frame.tag)
                    } else {
                        node = YAMLNode(.mapping(try Self.pairs(frame.items)), mark: frame.mark, tag: frame.tag)
                    }
                    try add(node, anchor: frame.anchor, counted: true)
                default:
                    break
                }
            }
        }

        /// Counts `count` more bytes of scalar text; over the bound, the document is refused.
        mutating func grow(by count: Int, at mark: SourceMark, alias: String? = nil) throws(YAMLSyntaxError) {
            expandedBytes += count
            guard expandedBytes <= maximumBytes else {
                let through = alias.map { " (the alias *\($0) repeats \(count) bytes)" } ?? ""
                throw YAMLSyntaxError(mark: mark, message: "the document expands to more than \(maximumBytes) bytes of text\(through)")
            }
        }

        mutating func push(_ frame: Frame) throws(YAMLSyntaxError) {
            guard stack.count < YAMLParser.maximumDepth else {
                throw YAMLSyntaxError(mark: frame.mark, message: "nested deeper than \(YAMLParser.maximumDepth) levels")
            }
            stack.append(frame)
        }

        mutating func add(_ node: YAMLNode, anchor: String?, counted: Bool = false) throws(YAMLSyntaxError) {
            if !counted {
                nodeCount += 1
                guard nodeCount <= YAMLParser.maximumNodes else {
                    throw YAMLSyntaxError(mark: node.mark, message: "more than \(YAMLParser.maximumNodes) nodes")
                }
            }
            if let anchor { anchors[anchor] = node }
            if stack.isEmpty {
                root = node
            } else {
                stack[stack.count - 1].items.append(node)
            }
        }

        static func pairs(_ items: [YAMLNode]) throws(YAMLSyntaxError) -> [YAMLPair] {
            var pairs: [YAMLPair] = []
            var seen: [String: SourceMark] = [:]
            var index = 0
            while index + 1 < items.count {
                let key = items[index], value = items[index + 1]
                if case .scalar(let text, _) = key.content {
                    if text == "<<" && key.tag == nil {
                        throw YAMLSyntaxError(mark: key.mark, message: "merge keys (`<<`) are not supported: write the keys out")
                    }
                    if let first = seen[text] {
                        throw YAMLSyntaxError(mark: key.mark, message: "duplicate key \"\(text)\" (first at \(first))")
                    }
                    seen[text] = key.mark
                } else {
                    throw YAMLSyntaxError(mark: key.mark, message: "a mapping key must be a scalar, not \(key.kindDescription)")
                }
                pairs.append(YAMLPair(key: key, value: value))
                index += 2
            }
            return pairs
        }

        static func count(_ node: YAMLNode) -> Int {
            switch node.content {
            case .scalar: return 1
            case .sequence(let items): return items.reduce(1) { $0 + count($1) }
            case .mapping(let pairs): return pairs.reduce(1) { $0 + count($1.key) + count($1.value) }
            }
        }

        /// The scalar text under `node`, in bytes.
        static func bytes(_ node: YAMLNode) -> Int {
            switch node.content {
            case .scalar(let text, _): return text.utf8.count
            case .sequence(let items): return items.reduce(0) { $0 + bytes($1) }
            case .mapping(let pairs): return pairs.reduce(0) { $0 + bytes($1.key) + bytes($1.value) }
            }
        }

        static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            guard let pointer else { return nil }
            return String(cString: pointer)
        }

        static func error(_ parser: yaml_parser_t) -> YAMLSyntaxError {
            let mark = SourceMark(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
            let context = parser.context.map { String(cString: $0) }
            let report = YAMLSyntaxExplanation.Report(
                problem: parser.problem.map { String(cString: $0) } ?? "invalid YAML", mark: mark, context: context,
                contextMark: context == nil ? nil : SourceMark(line: Int(parser.context_mark.line) + 1, column: Int(parser.context_mark.column) + 1))
            // The message is made where the text is known (``YAMLParser/parse(_:maximumBytes:)``).
            return YAMLSyntaxError(mark: mark, message: report.problem, report: report)
        }
    }
}
