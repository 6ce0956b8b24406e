internal import CSystemd
import CastCore
import Glibc

/// Reads castline's records straight from the journal with libsystemd's sd_journal API: the
/// local journal, or the files under `directory` (`journalctl -D`). Field matches narrow the read
/// inside journald's indexes (`SYSLOG_IDENTIFIER=castline`, `DEVICE=…`, `TYPE=LOAD`); what a
/// match cannot express (globs, levels, substrings) is checked by ``LogFilter`` afterwards.
package struct JournalReader: Sendable {
    package var directory: String?
    /// `SYSLOG_IDENTIFIER` to match (the journald sink's `identifier`, default `castline`); nil: any.
    package var identifier: String?

    package init(directory: String? = nil, identifier: String? = "castline") {
        self.directory = directory
        self.identifier = identifier
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The journal matches a filter allows (exact values only; the journald sink's field names).
    package static func matches(for filter: LogFilter, identifier: String?) -> [String] {
        var result: [String] = []
        if let identifier { result.append("SYSLOG_IDENTIFIER=\(identifier)") }
        if let type = filter.messageType { result.append("TYPE=\(type)") }
        if let id = filter.requestID { result.append("REQUEST_ID=\(id)") }
        if let ns = filter.namespace, ns.hasPrefix("urn:x-cast:") { result.append("NAMESPACE=\(ns)") }
        return result
    }

    /// Every entry passing `filter`, oldest first; `body` returns false to stop.
    package func run(filter: LogFilter, report: inout LogReadReport, _ body: (LogEntry) -> Bool) throws(Failure) {
        var journal: OpaquePointer?
        let rc: Int32
        if let directory {
            rc = sd_journal_open_directory(&journal, directory, 0)
        } else {
            rc = sd_journal_open(&journal, Int32(SD_JOURNAL_LOCAL_ONLY))
        }
        guard rc >= 0, let journal else {
            throw Failure(description: "cannot open the journal\(directory.map { " in \($0)" } ?? ""): \(String(cString: strerror(-rc)))")
        }
        defer { sd_journal_close(journal) }
        let name = directory.map { "journal:\($0)" } ?? "journal"
        report.inputs.append(name)
        for match in Self.matches(for: filter, identifier: identifier) {
            _ = match.withCString { sd_journal_add_match(journal, $0, 0) }
        }
        if let since = filter.since { sd_journal_seek_realtime_usec(journal, UInt64(max(0, since / 1000))) }
        var index = 0
        var previous: Int64?
        // Bounded by the journal's size: sd_journal_next returns 0 at its end.
        while sd_journal_next(journal) > 0 {
            index += 1
            report.lines += 1
            var object = JSONObject()
            var data: UnsafeRawPointer?
            var length = 0
            sd_journal_restart_data(journal)
            while sd_journal_enumerate_data(journal, &data, &length) > 0, let data {
                let field = UnsafeRawBufferPointer(start: data, count: length)
                guard let eq = field.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = String(decoding: field[..<eq], as: UTF8.self)
                object.set(key, .string(String(decoding: field[(eq + 1)...], as: UTF8.self)))
            }
            guard let entry = LogLineDecoder.journal(object, origin: LogOrigin(input: name, line: index)) else {
                report.unknownSchema += 1
                continue
            }
            report.records += 1
            report.noteTime(entry.time, after: previous)
            previous = entry.time
            if let until = filter.until, entry.time >= until { break }
            guard filter.matches(entry) else { continue }
            if !body(entry) { break }
        }
    }
}
