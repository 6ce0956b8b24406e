/// What reading the inputs met: counts of records and of every kind of line that was not one.
/// Reported by every `castline logs` command (stderr, or a `read` object in JSON); never fatal.
package struct LogReadReport: Sendable, Equatable {
    package var inputs: [String] = []
    /// Inputs named but not found (a rotated file may have been removed meanwhile).
    package var missing: [String] = []
    package var lines = 0
    package var records = 0
    package var blank = 0
    package var notJSON = 0
    package var unknownSchema = 0
    /// A last line without its newline (cut by a crash or still being written).
    package var unterminatedLastLines = 0
    /// Lines longer than the reader's limit, skipped.
    package var tooLong = 0
    /// A record more than a second older than the one before it in the same input.
    package var clockJumpsBack = 0
    /// The largest such step back, in nanoseconds.
    package var largestJumpBack: Int64 = 0
    /// Bytes of whole lines read from the last input (where `--follow` goes on from).
    package var completeBytes = 0

    package init() {}

    /// Adds what the records of one input showed (the reader counts lines itself).
    mutating func addContent(_ other: LogReadReport) {
        records += other.records
        blank += other.blank
        notJSON += other.notJSON
        unknownSchema += other.unknownSchema
        clockJumpsBack += other.clockJumpsBack
        largestJumpBack = max(largestJumpBack, other.largestJumpBack)
    }

    /// Counts a step back of more than a second from the previous record of the same input.
    mutating func noteTime(_ time: Int64, after previous: Int64?) {
        guard let previous, time < previous - 1_000_000_000 else { return }
        clockJumpsBack += 1
        largestJumpBack = max(largestJumpBack, previous - time)
    }

    mutating func count(_ problem: LogLineProblem) {
        switch problem {
        case .blank: blank += 1
        case .notJSON: notJSON += 1
        case .unknownSchema: unknownSchema += 1
        }
    }

    /// One line for humans: `read 3 file(s): 10234 records; skipped 2 non-JSON lines, …`.
    package var summary: String {
        var parts: [String] = []
        if notJSON > 0 { parts.append("\(notJSON) non-JSON line(s)") }
        if unknownSchema > 0 { parts.append("\(unknownSchema) JSON line(s) of another schema") }
        if unterminatedLastLines > 0 { parts.append("\(unterminatedLastLines) unterminated last line(s)") }
        if tooLong > 0 { parts.append("\(tooLong) line(s) over the length limit") }
        if clockJumpsBack > 0 { parts.append("\(clockJumpsBack) clock jump(s) back (largest \(Double(largestJumpBack) / 1e9) s)") }
        if !missing.isEmpty { parts.append("missing: \(missing.joined(separator: ", "))") }
        let head = "read \(inputs.count) input(s), \(lines) line(s): \(records) record(s)"
        return parts.isEmpty ? head : head + "; " + parts.joined(separator: ", ")
    }
}
