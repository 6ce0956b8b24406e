/// Reads inputs (files with their rotated sets, `-` for standard input) and hands every record
/// that passes `filter` to `body`, counting everything else in `report`. With a filter, lines
/// go through ``LinePrefilter`` first so most are never parsed.
package struct LogScan: Sendable {
    package var inputs: [String]
    package var filter: LogFilter
    /// Expand each file to its rotated set (`castline.jsonl.2`, `.1`, `castline.jsonl`).
    package var expandRotated = true

    package init(inputs: [String], filter: LogFilter = LogFilter(), expandRotated: Bool = true) {
        self.inputs = inputs
        self.filter = filter
        self.expandRotated = expandRotated
    }

    /// The files read, in order.
    package var files: [String] {
        inputs.flatMap { $0 == "-" || !expandRotated ? [$0] : LogFileReader.rotatedSet($0) }
    }

    /// `body` returns false to stop early (e.g. `--limit`).
    package func run(report: inout LogReadReport, _ body: (LogEntry) -> Bool) {
        let prefilter = filter.isEmpty ? nil : LinePrefilter(filter)
        let reader = LogFileReader()
        var going = true
        for file in files where going {
            var previous: Int64?
            var content = LogReadReport()
            reader.forEachLine(path: file, report: &report) { line, number in
                if let prefilter, !prefilter.mayMatch(line) {
                    content.records += 1
                    return true
                }
                switch LogLineDecoder.decode(line, origin: LogOrigin(input: file, line: number)) {
                case .failure(let problem):
                    content.count(problem)
                    return true
                case .success(let entry):
                    content.records += 1
                    content.noteTime(entry.time, after: previous)
                    previous = entry.time
                    guard filter.matches(entry) else { return true }
                    going = body(entry)
                    return going
                }
            }
            report.addContent(content)
        }
    }
}
