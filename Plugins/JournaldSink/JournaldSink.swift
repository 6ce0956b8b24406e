import CSystemd
import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The `journald` log sink: one journal entry per record through `sd_journal_sendv`, with
/// MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_FILE/CODE_LINE/CODE_FUNC, CASTLINE_CLASS,
/// CASTLINE_LEVEL, CASTLINE_TIME_NS, every structured field under a valid journald name (``JournalFieldName``)
/// and CASTLINE_TYPES (which of them are numbers or booleans: the journal keeps text only).
///
/// Runs on the host's worker thread for this sink, never on the caller's. libsystemd returns 0
/// when the journal socket does not exist (the entry is silently lost), so the sink checks the
/// socket itself (at most once a second) and counts the records it cannot deliver; a stale
/// socket (journald dead) shows as ECONNREFUSED. Either state is the sink's ``problem`` until an
/// entry goes through again.
///
/// Options: `identifier` (SYSLOG_IDENTIFIER, default `castline`), `socket` (the path checked
/// for existence, default `/run/systemd/journal/socket`).
final class JournaldSink: LogSinkPlugin {
    static let allowedOptions: Set<String> = ["identifier", "socket"]
    /// PRIORITY per castline level (index): verbose/debug 7, info 6, warning 4, error 3, assert 2.
    static let priority: [[UInt8]] = ["PRIORITY=7", "PRIORITY=7", "PRIORITY=7", "PRIORITY=6", "PRIORITY=4", "PRIORITY=3", "PRIORITY=2"].map { Array($0.utf8) }

    /// `CASTLINE_LEVEL=<name>`: PRIORITY alone cannot tell verbose from debug (both 7), and
    /// `castline logs` reads levels back.
    static let levelField: [[UInt8]] = ["none", "verbose", "debug", "info", "warning", "error", "assert"].map { Array("CASTLINE_LEVEL=\($0)".utf8) }

    private let identifier: [UInt8]
    private let socketPath: String
    private var names: [String: [UInt8]] = [:]
    private var entry: [UInt8] = []
    private var spans: [(Int, Int)] = []
    private var iovecs: [iovec] = []
    /// `NAME:i,NAME:d,NAME:b` of one record's typed fields (``typesPrefix``).
    private var types: [UInt8] = []
    /// The field that lists a record's non-text fields with their types (i: integer, d: double,
    /// b: boolean).
    static let typesPrefix = Array("CASTLINE_TYPES=".utf8)
    private var socketCheckedAt: Double = -10
    private var socketPresent = true
    private(set) var dropped: UInt64 = 0
    private(set) var problem: String?

    init(host: PluginHostServices, options: String) throws(PluginError) {
        guard case .object(let o) = try JSONValue.parsePluginInput(options) else { throw PluginError("journald sink options must be an object") }
        if let unknown = o.keys.sorted().first(where: { !Self.allowedOptions.contains($0) }) {
            throw PluginError("journald sink: unknown option \"\(unknown)\" (allowed: \(Self.allowedOptions.sorted().joined(separator: ", ")))")
        }
        let id = o["identifier"]?.string ?? "castline"
        guard !id.isEmpty, !id.utf8.contains(0x0A) else { throw PluginError("journald sink: identifier must be a non-empty single line") }
        identifier = Array("SYSLOG_IDENTIFIER=\(id)".utf8)
        socketPath = o["socket"]?.string ?? "/run/systemd/journal/socket"
        entry.reserveCapacity(4096)
    }

    func write(_ records: UnsafeBufferPointer<castline_log_record>) {
        guard journalReachable() else {
            dropped += UInt64(records.count)
            return
        }
        for r in records { send(r) }
    }

    /// Every entry is sent synchronously: nothing to flush.
    func close() {}

    /// The socket exists (checked at most once a second while it does, every batch while it does not).
    private func journalReachable() -> Bool {
        let now = Self.monotonicSeconds()
        if socketPresent, now - socketCheckedAt < 1 { return true }
        socketCheckedAt = now
        var st = stat()
        socketPresent = stat(socketPath, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
        if !socketPresent {
            problem = "journald socket \(socketPath) not found (journald is not running here)"
        }
        return socketPresent
    }

    private func send(_ r: castline_log_record) {
        entry.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        append("MESSAGE=", r.message, r.message_length)
        appendRaw(Self.priority[Int(min(max(r.level, 0), 6))])
        appendRaw(identifier)
        append("CASTLINE_CLASS=", r.class_name, r.class_name_length)
        appendRaw(Self.levelField[Int(min(max(r.level, 0), 6))])
        appendRaw(Array("CASTLINE_TIME_NS=\(r.timestamp_ns)".utf8))
        if r.file_length > 0 {
            append("CODE_FILE=", r.file, r.file_length)
            appendRaw(Array("CODE_LINE=\(r.line)".utf8))
        }
        if r.function_length > 0 { append("CODE_FUNC=", r.function, r.function_length) }
        if let fields = r.fields {
            types.removeAll(keepingCapacity: true)
            func typed(_ name: [UInt8], _ tag: UInt8) {
                if !types.isEmpty { types.append(UInt8(ascii: ",")) }
                types.append(contentsOf: name)
                types.append(UInt8(ascii: ":"))
                types.append(tag)
            }
            for i in 0..<r.field_count {
                let f = fields[i]
                guard let key = f.key else { continue }
                let name = fieldName(key, f.key_length)
                switch f.value_type {
                case Int32(CASTLINE_VALUE_INT.rawValue):
                    appendRaw(name + Array("=\(f.int_value)".utf8))
                    typed(name, UInt8(ascii: "i"))
                case Int32(CASTLINE_VALUE_DOUBLE.rawValue):
                    appendRaw(name + Array("=\(f.double_value)".utf8))
                    typed(name, UInt8(ascii: "d"))
                case Int32(CASTLINE_VALUE_BOOL.rawValue):
                    appendRaw(name + Array((f.int_value != 0 ? "=true" : "=false").utf8))
                    typed(name, UInt8(ascii: "b"))
                default:
                    let start = entry.count
                    entry.append(contentsOf: name)
                    entry.append(UInt8(ascii: "="))
                    if let s = f.string { entry.append(contentsOf: UnsafeRawBufferPointer(start: s, count: f.string_length)) }
                    spans.append((start, entry.count - start))
                }
            }
            // The journal keeps every value as text: which fields were numbers or booleans, so
            // `castline logs` reads them back as they were logged.
            if !types.isEmpty { appendRaw(Self.typesPrefix + types) }
        }
        let rc: Int32 = entry.withUnsafeMutableBytes { bytes in
            iovecs.removeAll(keepingCapacity: true)
            for (start, length) in spans {
                iovecs.append(iovec(iov_base: bytes.baseAddress! + start, iov_len: length))
            }
            return iovecs.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
        if rc < 0 {
            dropped += 1
            let reason = String(cString: strerror(-rc))
            problem = -rc == ECONNREFUSED
                ? "journald refuses entries (\(reason)): the socket \(socketPath) is stale, journald is not running"
                : "sd_journal_sendv failed: \(reason)"
        } else if problem != nil {
            problem = nil
        }
    }

    private func fieldName(_ key: UnsafePointer<CChar>, _ length: Int) -> [UInt8] {
        let text = String(decoding: UnsafeRawBufferPointer(start: key, count: length), as: UTF8.self)
        if let cached = names[text] { return cached }
        let name = Array(JournalFieldName.sanitize(text).utf8)
        if names.count < 1024 { names[text] = name }
        return name
    }

    private func append(_ prefix: StaticString, _ p: UnsafePointer<CChar>?, _ length: Int) {
        let start = entry.count
        entry.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        if let p, length > 0 { entry.append(contentsOf: UnsafeRawBufferPointer(start: p, count: length)) }
        spans.append((start, entry.count - start))
    }

    private func appendRaw(_ bytes: [UInt8]) {
        spans.append((entry.count, bytes.count))
        entry.append(contentsOf: bytes)
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

enum JournaldSinkPlugin: CastlinePlugin {
    static let id = "journald-sink"
    static let version = "1.0.0"
    static let summary = "systemd journal log sink (sd_journal_sendv) with sanitised field names"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.logSink(JournaldSink.self, id: "journald")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(JournaldSinkPlugin.self) }
