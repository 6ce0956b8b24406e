internal import CCastPluginABI
import CastLogging
#if canImport(Glibc)
import Glibc
#endif

/// A plugin's log-sink feature as a ``LogSink``: records become `castline_log_record`s whose
/// strings point into one reused byte arena, so a batch costs a few copies and one C call.
///
/// Isolation: ``LogSystem`` calls `write`/`flush` from the sink's worker thread only; `close` after
/// the pipeline stopped. The plugin never blocks the code that logs.
public final class PluginLogSink: LogSink, @unchecked Sendable {
    public let name: String
    public let feature: PluginFeature
    private let vtable: castline_log_sink_vtable
    private let instance: UnsafeMutableRawPointer?
    private let context: PluginHostContext
    private var closed = false
    private var reportedProblem: String?
    // Reused across batches (worker thread only).
    private let arena = ByteArena()
    private var spans: [RecordSpans] = []
    private var fieldSpans: [FieldSpan] = []
    private var records: [castline_log_record] = []
    private var fields: [castline_field] = []

    private struct RecordSpans {
        var className = 0, classLength = 0, message = 0, messageLength = 0, file = 0, fileLength = 0
        var function = 0, functionLength = 0, firstField = 0, fieldCount = 0
    }

    private struct FieldSpan {
        var key = 0, keyLength = 0, valueType: Int32 = 0, string = 0, stringLength = 0
        var int: Int64 = 0, double = 0.0
    }

    init(feature: PluginFeature, vtable: castline_log_sink_vtable, instance: UnsafeMutableRawPointer?, context: PluginHostContext, name: String) {
        self.feature = feature
        self.vtable = vtable
        self.instance = instance
        self.context = context
        self.name = name
    }

    /// Records the plugin itself lost (its `dropped` counter), 0 when it keeps none.
    public var pluginDropped: UInt64 { vtable.dropped.map { $0(instance) } ?? 0 }

    public func write(_ batch: [LogRecord]) {
        guard !closed, !batch.isEmpty else { return }
        // Locals moved out of the properties: no exclusivity checks in the loops.
        var spans = self.spans, fieldSpans = self.fieldSpans, records = self.records, fields = self.fields
        self.spans = []; self.fieldSpans = []; self.records = []; self.fields = []
        let arena = self.arena
        arena.count = 0
        spans.removeAll(keepingCapacity: true)
        fieldSpans.removeAll(keepingCapacity: true)
        // Through a pointer each record is borrowed, not copied (no retain/release per string).
        batch.withUnsafeBufferPointer { records in
        let p = records.baseAddress!
        for index in records.indices {
            var s = RecordSpans()
            (s.className, s.classLength) = arena.append(p[index].className)
            (s.message, s.messageLength) = arena.append(p[index].message)
            (s.file, s.fileLength) = p[index].withFileUTF8 { arena.append($0) }
            (s.function, s.functionLength) = p[index].withFunctionUTF8 { arena.append($0) }
            s.firstField = fieldSpans.count
            p[index].fields.forEachField { key, value in
                var f = FieldSpan()
                (f.key, f.keyLength) = arena.append(key)
                switch value {
                case .string(let text):
                    f.valueType = Int32(CASTLINE_VALUE_STRING.rawValue)
                    (f.string, f.stringLength) = arena.append(text)
                case .int(let i):
                    f.valueType = Int32(CASTLINE_VALUE_INT.rawValue)
                    f.int = i
                case .double(let d):
                    f.valueType = Int32(CASTLINE_VALUE_DOUBLE.rawValue)
                    f.double = d
                case .bool(let b):
                    f.valueType = Int32(CASTLINE_VALUE_BOOL.rawValue)
                    f.int = b ? 1 : 0
                }
                fieldSpans.append(f)
            }
            s.fieldCount = fieldSpans.count - s.firstField
            spans.append(s)
        }
        }
        let base = UnsafeRawPointer(arena.base).assumingMemoryBound(to: CChar.self)
        fields.removeAll(keepingCapacity: true)
        for f in fieldSpans {
            fields.append(castline_field(
                key: base + f.key, key_length: f.keyLength, value_type: f.valueType,
                string: f.valueType == Int32(CASTLINE_VALUE_STRING.rawValue) ? base + f.string : nil,
                string_length: f.stringLength, int_value: f.int, double_value: f.double))
        }
        fields.withUnsafeBufferPointer { fieldBuffer in
            records.removeAll(keepingCapacity: true)
            for (i, s) in spans.enumerated() {
                records.append(castline_log_record(
                    timestamp_ns: batch[i].timestampNanos, level: Int32(batch[i].level.rawValue), line: UInt32(clamping: batch[i].line),
                    class_name: base + s.className, class_name_length: s.classLength,
                    message: base + s.message, message_length: s.messageLength,
                    file: base + s.file, file_length: s.fileLength,
                    function: base + s.function, function_length: s.functionLength,
                    fields: s.fieldCount > 0 ? fieldBuffer.baseAddress! + s.firstField : nil, field_count: s.fieldCount))
            }
            records.withUnsafeBufferPointer { vtable.write!(instance, $0.baseAddress, $0.count) }
        }
        self.spans = spans; self.fieldSpans = fieldSpans; self.records = records; self.fields = fields
        checkProblem()
    }

    /// Why the plugin cannot deliver right now (its `problem` call); nil when it delivers.
    public var problem: String? {
        guard let f = vtable.problem else { return nil }
        let text = PluginErrorText()
        return f(instance, text.buffer) != 0 ? (text.text ?? "unknown problem") : nil
    }

    /// Reports each change of the plugin's problem once, as a record (it reaches the other sinks).
    private func checkProblem() {
        let now = problem
        guard now != reportedProblem else { return }
        let log = Logger(class: "PluginLogSink", system: context.logSystem)
        let droppedCount: Int64 = Int64(truncatingIfNeeded: pluginDropped)
        let fields: LogFields = ["sink": .string(name), "plugin": .string(feature.pluginID), "dropped": .int(droppedCount)]
        if let now {
            log.warning("log sink \(name) cannot deliver: \(now); records are dropped and counted until it recovers", fields)
        } else {
            log.info("log sink \(name) delivers again", fields)
        }
        reportedProblem = now
    }

    public func flush() {
        guard !closed else { return }
        vtable.flush?(instance)
    }

    /// Flushes and closes the plugin instance. Remove the sink from the ``LogSystem`` first.
    public func close() {
        guard !closed else { return }
        closed = true
        vtable.close!(instance)
        context.unregister()
    }

}

extension PluginHost {
    /// Opens a log sink of the feature `id` (e.g. `json`, `journald`) with its options object.
    /// Add the result to a ``LogSystem`` with `addSink(_:)`.
    public func openLogSink(id: String, options: String = "{}", name: String? = nil) throws(PluginLoadError) -> PluginLogSink {
        guard let feature = feature(.logSink, id: id), case .logSink(let vtable) = feature.vtable else {
            throw PluginLoadError(.undeclared, path: "", "no log sink \"\(id)\" is loaded (loaded sinks: \(features(of: .logSink).map(\.id).joined(separator: ", ")))")
        }
        let context = PluginHostContext.register(pluginID: feature.pluginID, featureID: feature.id, role: .logSink, logSystem: logSystem)
        let errorText = PluginErrorText()
        var instance: UnsafeMutableRawPointer?
        let rc = options.withCString {
            vtable.open!(feature.userdata.pointer, HostServices.table, context.pointer, $0, &instance, errorText.buffer)
        }
        guard rc == 0 else {
            context.unregister()
            let error = PluginLoadError(.initFailed, path: plugins.first { $0.id == feature.pluginID }?.path ?? "", pluginID: feature.pluginID,
                                        "log sink \(id) could not open (status \(rc)): \(errorText.text ?? "no reason given")")
            log.error(error.description, ["plugin": .string(feature.pluginID), "feature": .string(id), "problem": "open_failed"])
            throw error
        }
        return PluginLogSink(feature: feature, vtable: vtable, instance: instance, context: context, name: name ?? id)
    }
}

/// The bytes of one batch's strings, each NUL-terminated, behind one stable pointer while the
/// batch is handed to the plugin. Grows by doubling; reset per batch. Worker thread only.
/// Its properties skip Swift's dynamic exclusivity checks (one thread uses it, and no access
/// overlaps another): they cost more than the copies on the per-field path.
final class ByteArena {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) var count = 0

    init(capacity: Int = 1 << 16) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Appends the bytes and a NUL; returns (offset, length without the NUL).
    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int) {
        let needed = count + bytes.count + 1
        if needed > capacity { grow(needed) }
        let offset = count
        if let source = bytes.baseAddress { (base + offset).update(from: source, count: bytes.count) }
        base[offset + bytes.count] = 0
        count = needed
        return (offset, bytes.count)
    }

    @inline(__always)
    func append(_ string: String) -> (Int, Int) {
        if let result = string.utf8.withContiguousStorageIfAvailable({ append($0) }) { return result }
        var copy = string
        return copy.withUTF8 { append($0) }
    }

    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        bigger.update(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }
}
