import CastCore
import CastLogging
import Synchronization

/// The records logged while a plugin is tested (the plugin's own through the host, and the
/// host's about it), kept in memory for `expect_record` steps and the report. Keeps the newest
/// 100,000. Thread-safe.
final class HarnessRecords: LogSink {
    let name = "harness"
    private let stored = Mutex<[LogRecord]>([])
    private static let capacity = 100_000

    func write(_ records: [LogRecord]) {
        stored.withLock { kept in
            kept.append(contentsOf: records)
            if kept.count > Self.capacity { kept.removeFirst(kept.count - Self.capacity) }
        }
    }

    var records: [LogRecord] { stored.withLock { $0 } }

    /// How many records are kept now (where a later search starts).
    var count: Int { stored.withLock { $0.count } }

    /// The first record at or after `start` that matches `pattern` (searched in place).
    func first(matching pattern: HarnessScript.RecordPattern, from start: Int) -> (index: Int, record: LogRecord)? {
        stored.withLock { kept in
            guard start < kept.count else { return nil }
            for index in start..<kept.count where Self.matches(kept[index], pattern) { return (index, kept[index]) }
            return nil
        }
    }

    static func matches(_ record: LogRecord, _ pattern: HarnessScript.RecordPattern) -> Bool {
        if let className = pattern.className, record.className != className { return false }
        if let level = pattern.level, record.level.name != level { return false }
        if let text = pattern.message, !record.message.contains(text) { return false }
        if let fields = pattern.fields {
            var actual = JSONObject()
            for (key, value) in record.fields { actual.set(key, json(value)) }
            if !HarnessScript.contains(.object(actual), fields) { return false }
        }
        return true
    }

    private static func json(_ value: LogValue) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .bool(let b): .bool(b)
        }
    }
}
