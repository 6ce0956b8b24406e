import CastCore
import CastLogging

/// Why a line is not a record (counted, never fatal).
public enum LogLineProblem: String, Error, Sendable, CaseIterable {
    /// Empty or only spaces (the JSON sink pads page ends with spaces).
    case blank
    /// Not JSON (a stray text line, a line cut by a crash).
    case notJSON
    /// JSON, but neither castline's schema nor a journal entry.
    case unknownSchema
}

/// Decodes one line: castline's JSON Lines schema (version 1; readers ignore unknown keys, so
/// later versions that only add keys read fine) or a `journalctl -o json` entry written by the
/// journald sink (fields named by `JournalFieldName`, all values strings). Pure.
public enum LogLineDecoder {
    public static func decode(_ line: UnsafeRawBufferPointer, origin: LogOrigin) -> Result<LogEntry, LogLineProblem> {
        var start = 0, end = line.count
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        guard start < end else { return .failure(.blank) }
        guard line[start] == UInt8(ascii: "{") else { return .failure(.notJSON) }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes: UnsafeRawBufferPointer(rebasing: line[start..<end])) } catch { return .failure(.notJSON) }
        guard case .object(let object) = value else { return .failure(.unknownSchema) }
        if let entry = castline(object, origin: origin) { return .success(entry) }
        if let entry = journal(object, origin: origin) { return .success(entry) }
        return .failure(.unknownSchema)
    }

    package static func decode(_ text: String, origin: LogOrigin = LogOrigin(input: "-", line: 1)) -> Result<LogEntry, LogLineProblem> {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { decode(UnsafeRawBufferPointer($0), origin: origin) }
    }

    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    /// castline JSON Lines: `time_unix_nano` (or `time`), `level` (or `severity_number`), `class`, `body`.
    static func castline(_ o: JSONObject, origin: LogOrigin) -> LogEntry? {
        guard case .string(let className)? = o["class"] else { return nil }
        var time: Int64?
        if case .int(let t)? = o["time_unix_nano"] { time = t }
        if time == nil, case .string(let text)? = o["time"] { time = LogTime.parse(text) }
        var level: LogLevel?
        if case .string(let name)? = o["level"] { level = LogLevel(parsing: name) }
        if level == nil, case .int(let n)? = o["severity_number"] { level = levelForSeverity(Int(n)) }
        guard let time, let level else { return nil }
        var entry = LogEntry(time: time, level: level, className: className, body: o["body"]?.string ?? "", origin: origin)
        if case .object(let attributes)? = o["attributes"] { entry.attributes = attributes }
        entry.file = o["code.filepath"]?.string
        entry.line = o["code.lineno"]?.int.map { Int($0) }
        entry.function = o["code.function"]?.string
        return entry
    }

    /// OpenTelemetry severity number → level (ranges: 1–4 trace, 5–8 debug, 9–12 info, …).
    static func levelForSeverity(_ n: Int) -> LogLevel? {
        switch n {
        case 1...4: return .verbose
        case 5...8: return .debug
        case 9...12: return .info
        case 13...16: return .warning
        case 17...20: return .error
        case 21...24: return .assert
        default: return nil
        }
    }

    /// Journal fields that are not castline attributes.
    static let journalFields: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "SYSLOG_IDENTIFIER", "SYSLOG_FACILITY",
        "SYSLOG_PID", "SYSLOG_TIMESTAMP", "TID", "CASTLINE_CLASS", "CASTLINE_TIME_NS", "CASTLINE_LEVEL", "CASTLINE_TYPES", "ERRNO",
        "DOCUMENTATION", "INVOCATION_ID", "UNIT", "USER_UNIT",
    ]

    /// A `journalctl -o json` entry from the journald sink (it has `CASTLINE_CLASS`).
    static func journal(_ o: JSONObject, origin: LogOrigin) -> LogEntry? {
        guard let className = o["CASTLINE_CLASS"]?.string else { return nil }
        let time = o["CASTLINE_TIME_NS"]?.string.flatMap { Int64($0) }
            ?? o["__REALTIME_TIMESTAMP"]?.string.flatMap { Int64($0) }.flatMap { micro in
                // µs → ns; a value that overflows is not a time (the fuzzer found one).
                let (ns, overflow) = micro.multipliedReportingOverflow(by: 1000)
                return overflow ? nil : ns
            }
        var level = o["CASTLINE_LEVEL"]?.string.flatMap { LogLevel(parsing: $0) }
        if level == nil, let priority = o["PRIORITY"]?.string.flatMap({ Int($0) }) {
            level = LogLevelMapping.table.last(where: { $0.journaldPriority == priority })?.level ?? .debug
        }
        guard let time, let level else { return nil }
        var entry = LogEntry(time: time, level: level, className: className, body: message(o["MESSAGE"]), origin: origin)
        entry.file = o["CODE_FILE"]?.string
        entry.line = o["CODE_LINE"]?.string.flatMap { Int($0) }
        entry.function = o["CODE_FUNC"]?.string
        entry.host = o["_HOSTNAME"]?.string
        let types = o["CASTLINE_TYPES"]?.string.map(fieldTypes) ?? [:]
        var attributes = JSONObject()
        for (key, value) in o where !key.hasPrefix("_") && !journalFields.contains(key) {
            attributes.set(attributeName(key), types[key].map { typed(value, $0) } ?? value)
        }
        entry.attributes = attributes
        return entry
    }

    /// `CASTLINE_TYPES` (`PID:i,LATENCY:d,OK:b`): the journald sink's list of the fields that
    /// were not text, by journal name.
    static func fieldTypes(_ text: String) -> [String: Character] {
        var types: [String: Character] = [:]
        for item in text.split(separator: ",") {
            guard let colon = item.lastIndex(of: ":"), let tag = item[item.index(after: colon)...].first else { continue }
            types[String(item[..<colon])] = tag
        }
        return types
    }

    /// A journal value (text) as the type it was logged with; the text when it does not parse.
    static func typed(_ value: JSONValue, _ tag: Character) -> JSONValue {
        guard case .string(let text) = value else { return value }
        switch tag {
        case "i": return Int64(text).map { .int($0) } ?? value
        case "d": return Double(text).map { .double($0) } ?? value
        case "b": return text == "true" ? .bool(true) : text == "false" ? .bool(false) : value
        default: return value
        }
    }

    /// MESSAGE is a string, or an array of bytes when it is not valid UTF-8.
    static func message(_ value: JSONValue?) -> String {
        switch value {
        case .string(let s)?: return s
        case .array(let bytes)?: return String(decoding: bytes.compactMap { $0.int.map { UInt8(truncatingIfNeeded: $0) } }, as: UTF8.self)
        default: return ""
        }
    }

    /// `REQUEST_ID` → `requestId`, `DEVICE_NAME` → `deviceName` (the journald sink's names back).
    static func attributeName(_ field: String) -> String {
        var out = ""
        var upper = false
        for c in field.lowercased() {
            if c == "_" { upper = !out.isEmpty; continue }
            out.append(upper ? Character(c.uppercased()) : c)
            upper = false
        }
        return out
    }
}
