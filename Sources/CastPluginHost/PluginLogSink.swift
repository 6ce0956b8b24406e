internal import CCastPluginABI
import CastLogging
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A plugin's log-sink feature as a ``LogSink``: records become `castline_log_record`s whose
/// strings point into one reused byte arena, so a batch costs a few copies and one C call.
///
/// Isolation: ``LogSystem`` calls `write`/`flush` from the sink's worker thread only; `close` after
/// the pipeline stopped. The plugin never blocks the code that logs.
///
/// Time bound: each `write`, `flush` and `close` gets ``PluginHost/callTimeout``. A call that
/// overruns it is named in an error record (class `PluginLogSink`, fields `sink`, `plugin`,
/// `call`, `bound`, `problem: timed_out`) and disables the sink and its plugin: the records its
/// queue cannot take meanwhile are dropped and counted by the ``LogSystem`` (the sink's
/// `dropped` statistic), and those handed to it after the call returns are dropped and counted
/// here (``discarded``, which the statistic includes). Its `close` waits at most the bound, and
/// the plugin's `close` runs only once no call is in progress.
public final class PluginLogSink: LogSink, @unchecked Sendable {
    public let name: String
    package let feature: PluginFeature
    private let vtable: castline_log_sink_vtable
    private let instance: UnsafeMutableRawPointer?
    private let context: PluginHostContext
    private let watch: PluginCallWatch
    /// Held during every call into the plugin: its `close` never runs while a `write` does.
    private let calls = Mutex(())
    private let closedFlag = Atomic(false)
    private let discardedCount = Atomic<UInt64>(0)
    private var closed: Bool { closedFlag.load(ordering: .relaxed) }
    private var reportedProblem: String?
    // Reused across batches (worker thread only): strings, then the C fields and records, each
    // written in place by index (no array appends, no uniqueness checks).
    private let arena = ByteArena()
    private let fieldStore = ReusableBuffer<castline_field>()
    private let recordStore = ReusableBuffer<castline_log_record>()

    init(feature: PluginFeature, vtable: castline_log_sink_vtable, instance: UnsafeMutableRawPointer?, context: PluginHostContext,
         name: String, watch: PluginCallWatch) {
        self.feature = feature
        self.vtable = vtable
        self.instance = instance
        self.context = context
        self.name = name
        self.watch = watch
    }

    /// Records handed to the sink after it was disabled (an overrun), dropped and counted.
    public var discarded: UInt64 { discardedCount.load(ordering: .relaxed) }

    /// The plugin call running now (`write`, `flush`, `close`), nil between calls.
    var callInProgress: String? { watch.inProgress }

    /// The call that overran and its bound, nil while the plugin keeps its bounds.
    /// `elapsed`: how long the call had run when the overrun was noticed.
    package var overrun: (call: String, bound: Double, elapsed: Double)? { watch.tripped.map { ($0.call, $0.bound, $0.elapsed) } }

    /// Records the plugin itself lost (its `dropped` counter), 0 when it keeps none.
    public var pluginDropped: UInt64 { vtable.dropped.map { $0(instance) } ?? 0 }

    public func write(_ batch: [LogRecord]) {
        var records = batch
        take(&records)
    }

    /// Moves the records out of the batch, last first (each then its own: its strings are read
    /// without a retain and release), copying their text into the arena and writing the C
    /// records in place by index.
    public func take(_ batch: inout [LogRecord]) {
        guard !batch.isEmpty else { return }
        guard !closed, watch.begin("write") else {
            discardedCount.add(UInt64(batch.count), ordering: .relaxed)
            return
        }
        defer { watch.end() }
        let arena = self.arena, fieldStore = self.fieldStore, recordStore = self.recordStore
        arena.count = 0
        let recordCount = batch.count
        var fieldCount = 0
        // Strings go into the arena, which may move while it grows: the C records hold offsets
        // (as pointers from 0) until the batch is in, then one pass rebases them on the arena.
        func offset(_ span: (Int, Int)) -> (UnsafePointer<CChar>?, Int) {
            (UnsafePointer(bitPattern: span.0 &+ 1), span.1)
        }
        let out = recordStore.reserve(recordCount)
        var index = recordCount
        // Who wrote the records (``LogProcess``): added to each record that names no process yet.
        let process = context.logSystem.process
        let pidKey = offset(arena.append(LogProcess.pidField)), roleKey = offset(arena.append(LogProcess.roleField))
        let roleText = offset(arena.append(process.role))
        while let record = batch.popLast() {
            index &-= 1
            let firstField = fieldCount
            var named = false
            record.fields.forEachField { key, value in
                if !named, key.utf8.count == 3, key == LogProcess.pidField { named = true }
                let fields = fieldStore.reserve(fieldCount &+ 1, keeping: fieldCount)
                var f = castline_field()
                (f.key, f.key_length) = offset(arena.append(key))
                switch value {
                case .string(let text):
                    f.value_type = Int32(CASTLINE_VALUE_STRING.rawValue)
                    (f.string, f.string_length) = offset(arena.append(text))
                case .int(let i):
                    f.value_type = Int32(CASTLINE_VALUE_INT.rawValue)
                    f.int_value = i
                case .double(let d):
                    f.value_type = Int32(CASTLINE_VALUE_DOUBLE.rawValue)
                    f.double_value = d
                case .bool(let b):
                    f.value_type = Int32(CASTLINE_VALUE_BOOL.rawValue)
                    f.int_value = b ? 1 : 0
                }
                fields[fieldCount] = f
                fieldCount &+= 1
            }
            if !named {
                let fields = fieldStore.reserve(fieldCount &+ 2, keeping: fieldCount)
                var pid = castline_field()
                (pid.key, pid.key_length) = pidKey
                pid.value_type = Int32(CASTLINE_VALUE_INT.rawValue)
                pid.int_value = Int64(process.pid)
                var role = castline_field()
                (role.key, role.key_length) = roleKey
                role.value_type = Int32(CASTLINE_VALUE_STRING.rawValue)
                (role.string, role.string_length) = roleText
                fields[fieldCount] = pid
                fields[fieldCount &+ 1] = role
                fieldCount &+= 2
            }
            var r = castline_log_record()
            r.timestamp_ns = record.timestampNanos
            r.level = Int32(record.level.rawValue)
            r.line = UInt32(clamping: record.line)
            (r.class_name, r.class_name_length) = offset(arena.append(record.className))
            (r.message, r.message_length) = offset(arena.append(record.message))
            (r.file, r.file_length) = offset(record.withFileUTF8 { arena.append($0) })
            (r.function, r.function_length) = offset(record.withFunctionUTF8 { arena.append($0) })
            // The first field's index, until the rebase.
            r.fields = UnsafePointer(bitPattern: firstField &+ 1)
            r.field_count = fieldCount &- firstField
            out[index] = r
        }
        // Rebase: offsets become pointers into the arena and the field store, which no longer move.
        let base = UnsafeRawPointer(arena.base).assumingMemoryBound(to: CChar.self) - 1
        @inline(__always) func rebase(_ pointer: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
            pointer.map { base + Int(bitPattern: $0) }
        }
        let fields = fieldStore.base, records = recordStore.base
        for i in 0..<fieldCount {
            fields[i].key = rebase(fields[i].key)
            if fields[i].value_type == Int32(CASTLINE_VALUE_STRING.rawValue) { fields[i].string = rebase(fields[i].string) }
        }
        let firstFieldBase = UnsafePointer(fields) - 1
        for i in 0..<recordCount {
            records[i].class_name = rebase(records[i].class_name)
            records[i].message = rebase(records[i].message)
            records[i].file = rebase(records[i].file)
            records[i].function = rebase(records[i].function)
            records[i].fields = records[i].field_count > 0 ? firstFieldBase + Int(bitPattern: records[i].fields) : nil
        }
        calls.withLock { _ in vtable.write!(instance, records, recordCount) }
        checkProblem()
    }

    /// Why the plugin cannot deliver right now (its `problem` call); nil when it delivers.
    package var problem: String? {
        guard let f = vtable.problem else { return nil }
        let text = PluginErrorText()
        return f(instance, text.buffer) != 0 ? (text.text ?? "unknown problem") : nil
    }

    func armWatch(host: PluginHost) {
        watch.arm { [weak self, weak host] overrun in
            guard let self, let host else { return }
            self.overran(overrun, host: host)
        }
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
        guard !closed, let flush = vtable.flush else { return }
        let instance = instance
        watch.run("flush") { calls.withLock { _ in flush(instance) } }
    }

    /// Flushes and closes the plugin instance, waiting at most the bound. Remove the sink from
    /// the ``LogSystem`` first. A sink that overran is closed only once its stuck call returns
    /// (if ever); nobody waits for that.
    public func close() {
        guard !closedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let vtable = vtable, instance = InstancePointer(pointer: instance), watch = watch
        let done = DispatchSemaphore(value: 0)
        let tripped = watch.tripped
        // A queue of its own (a thread dispatch may add), not the shared pool: the close may
        // wait for a stuck write.
        DispatchQueue(label: "castline.plugin.\(feature.pluginID).\(name).close").async {
            self.calls.withLock { _ in
                if tripped == nil {
                    _ = watch.begin("close")
                    vtable.close!(instance.pointer)
                    watch.end()
                } else {
                    vtable.close!(instance.pointer)
                }
            }
            done.signal()
        }
        if tripped == nil, done.wait(timeout: .now() + .nanoseconds(Int(watch.bound * 1e9))) == .timedOut {
            watch.trip("close")
        }
        context.unregister()
    }

    /// A call overran: one error record names the sink and its plugin; the plugin is disabled.
    func overran(_ overrun: PluginCallWatch.Overrun, host: PluginHost) {
        let path = host.path(ofPlugin: feature.pluginID)
        let error = PluginLoadError(.timedOut, path: path, pluginID: feature.pluginID,
            "disabled: log sink \(name)'s \(overrun.call) did not return within \(PluginScan.seconds(overrun.bound)) (plugins.call_timeout); its records are dropped and counted")
        Logger(class: "PluginLogSink", system: context.logSystem).error(error.description, [
            "sink": .string(name), "plugin": .string(feature.pluginID), "feature": .string(feature.id), "call": .string(overrun.call),
            "bound": .double(overrun.bound), "elapsed": .double(overrun.elapsed), "problem": .string(error.kind.rawValue), "path": .string(path),
        ])
        host.disable(pluginID: feature.pluginID, error)
    }

}

extension PluginHost {
    /// Opens a log sink of the feature `id`, in this process or in its plugin's helper process
    /// (`plugins.isolated`: an ``IsolatedLogSink``). Add the result to a ``LogSystem``.
    public func openAnyLogSink(id: String, options: String = "{}", name: String? = nil) throws(PluginLoadError) -> any LogSink {
        if let feature = feature(.logSink, id: id), case .isolated(let helper) = feature.vtable {
            let sink = IsolatedLogSink(plugin: helper, featureID: id, options: options, name: name ?? id)
            if let error = helper.openSink(sink) {
                helper.forget(sink)
                let failure = PluginLoadError(.initFailed, path: helper.path, pluginID: helper.pluginID,
                                              "log sink \(id) could not open in its helper process: \(error)")
                log.error(failure.description, ["plugin": .string(helper.pluginID), "feature": .string(id), "problem": "open_failed"])
                throw failure
            }
            return sink
        }
        return try openLogSink(id: id, options: options, name: name)
    }

    /// Opens a log sink of the feature `id` (e.g. `json`, `journald`) with its options object,
    /// in this process. Add the result to a ``LogSystem`` with `addSink(_:)`.
    public func openLogSink(id: String, options: String = "{}", name: String? = nil) throws(PluginLoadError) -> PluginLogSink {
        if let problem = runtimeProblem(.logSink, id: id) { throw problem }
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
        let sink = PluginLogSink(feature: feature, vtable: vtable, instance: instance, context: context, name: name ?? id,
                                 watch: PluginCallWatch(bound: callTimeout))
        sink.armWatch(host: self)
        return sink
    }
}

/// Storage for C values of one batch, written by index; grows by doubling, never shrinks.
/// Worker thread only, no overlapping accesses: no exclusivity checks.
final class ReusableBuffer<Element> {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Room for `count` elements; the first `keeping` are kept when it grows.
    @inline(__always)
    func reserve(_ count: Int, keeping: Int = 0) -> UnsafeMutablePointer<Element> {
        if count > capacity { grow(count, keeping: keeping) }
        return base
    }

    private func grow(_ needed: Int, keeping: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        bigger.moveInitialize(from: base, count: keeping)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }
}

/// The bytes of one batch's strings, each NUL-terminated, behind one stable pointer while the
/// batch is handed to the plugin. Grows by doubling; reset per batch. Worker thread only.
/// Its properties skip Swift's dynamic exclusivity checks (one thread uses it, and no access
/// overlaps another): they cost more than the copies on the per-field path.
final class ByteArena {
    private let storage = ReusableBuffer<UInt8>(capacity: 1 << 16)
    @exclusivity(unchecked) var count = 0

    var base: UnsafeMutablePointer<UInt8> { storage.base }

    /// Appends the bytes and a NUL; returns (offset, length without the NUL). Up to 16 bytes
    /// (most keys, values and names) are copied as two overlapping words inside the string's own
    /// range, not by a `memcpy` call.
    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int) {
        let length = bytes.count
        let needed = count &+ length &+ 1
        let base = storage.reserve(needed, keeping: count)
        let offset = count
        if let source = bytes.baseAddress {
            let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(base + offset)
            if length >= 8, length <= 16 {
                to.storeBytes(of: from.loadUnaligned(as: UInt64.self), as: UInt64.self)
                to.storeBytes(of: from.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self), toByteOffset: length &- 8, as: UInt64.self)
            } else if length >= 4, length < 8 {
                to.storeBytes(of: from.loadUnaligned(as: UInt32.self), as: UInt32.self)
                to.storeBytes(of: from.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self), toByteOffset: length &- 4, as: UInt32.self)
            } else if length < 4 {
                for i in 0..<length { base[offset &+ i] = source[i] }
            } else {
                to.copyMemory(from: from, byteCount: length)
            }
        }
        base[offset &+ length] = 0
        count = needed
        return (offset, length)
    }

    @inline(__always)
    func append(_ string: String) -> (Int, Int) {
        if let result = string.utf8.withContiguousStorageIfAvailable({ append($0) }) { return result }
        var copy = string
        return copy.withUTF8 { append($0) }
    }
}
