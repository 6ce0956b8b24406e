import CastCore
import CastLogging
import Synchronization

/// A log-sink feature of an isolated plugin (``IsolatedPlugin``), as a ``LogSink``: each batch is
/// one `records` frame to the helper, written straight as JSON text into a reused buffer
/// (`[timestamp_ns, level, class, message, file, function, line, {fields}]` per record), where
/// the helper hands it to the plugin's `write`. A crash or hang there never reaches this
/// process: while the helper is down (or does not take a frame within the bound) the batch is
/// dropped and counted (``discarded``, which the sink's `dropped` statistic includes), and the
/// sink is opened again in the restarted helper.
///
/// Isolation: ``LogSystem`` calls `write`/`flush` from the sink's worker thread only.
public final class IsolatedLogSink: LogSink, @unchecked Sendable {
    public let name: String
    let featureID: String
    let options: String
    let plugin: IsolatedPlugin
    /// Set by the plugin (under its lock) at the first open; survives restarts.
    var instance: UInt64 = 0
    private let discardedCount = Atomic<UInt64>(0)
    private let up = Atomic(true)
    private let closed = Atomic(false)
    // Worker thread only.
    private var writer = JSONWriter(capacity: 1 << 16)
    private var prefix: [UInt8] = []

    init(plugin: IsolatedPlugin, featureID: String, options: String, name: String) {
        self.plugin = plugin
        self.featureID = featureID
        self.options = options
        self.name = name
    }

    public var discarded: UInt64 { discardedCount.load(ordering: .relaxed) }

    /// The helper ended: batches are dropped and counted until it is back.
    func helperDown() { up.store(false, ordering: .relaxed) }

    /// Opens the sink again in the restarted helper.
    func reopen() {
        guard !closed.load(ordering: .relaxed) else { return }
        if let error = plugin.openSink(self) {
            plugin.log.error("plugin \(plugin.pluginID): log sink \(name) could not be opened again after the restart: \(error); its records are dropped and counted",
                             ["sink": .string(name), "feature": .string(featureID)])
            return
        }
        up.store(true, ordering: .relaxed)
    }

    public func write(_ batch: [LogRecord]) {
        guard !batch.isEmpty else { return }
        guard up.load(ordering: .relaxed), !closed.load(ordering: .relaxed) else {
            discardedCount.add(UInt64(batch.count), ordering: .relaxed)
            return
        }
        if prefix.isEmpty { prefix = Array(#"{"records":{"instance":\#(instance),"batch":["#.utf8) }
        writer.removeAll()
        prefix.withUnsafeBytes { writer.append($0) }
        // The records are this process's, not the helper's: they name it (``LogProcess``).
        let process = plugin.logSystem.process
        for (index, record) in batch.enumerated() {
            if index > 0 { writer.append(UInt8(ascii: ",")) }
            writer.append(UInt8(ascii: "["))
            writer.write(unsigned: record.timestampNanos)
            writer.append(UInt8(ascii: ","))
            writer.write(integer: Int64(record.level.rawValue))
            writer.append(UInt8(ascii: ","))
            writer.write(string: record.className)
            writer.append(UInt8(ascii: ","))
            writer.write(string: record.message)
            writer.append(UInt8(ascii: ","))
            record.withFileUTF8 { writer.write(string: $0) }
            writer.append(UInt8(ascii: ","))
            record.withFunctionUTF8 { writer.write(string: $0) }
            writer.append(UInt8(ascii: ","))
            writer.write(unsigned: UInt64(record.line))
            writer.append(",{")
            var first = true, named = false
            record.fields.forEachField { key, value in
                if !first { writer.append(UInt8(ascii: ",")) }
                first = false
                if !named, key.utf8.count == 3, key == LogProcess.pidField { named = true }
                writer.write(string: key)
                writer.append(UInt8(ascii: ":"))
                switch value {
                case .string(let text): writer.write(string: text)
                case .int(let i): writer.write(integer: i)
                case .double(let d): writer.write(double: d)
                case .bool(let b): writer.append(b ? "true" : "false")
                }
            }
            if !named {
                if !first { writer.append(UInt8(ascii: ",")) }
                writer.write(string: LogProcess.pidField)
                writer.append(UInt8(ascii: ":"))
                writer.write(integer: Int64(process.pid))
                writer.append(UInt8(ascii: ","))
                writer.write(string: LogProcess.roleField)
                writer.append(UInt8(ascii: ":"))
                writer.write(string: process.role)
            }
            writer.append("}]")
        }
        writer.append("]}}")
        if !plugin.sendRaw(writer.bytes) {
            discardedCount.add(UInt64(batch.count), ordering: .relaxed)
        }
    }

    public func flush() {
        guard up.load(ordering: .relaxed), !closed.load(ordering: .relaxed) else { return }
        let frame = Array(#"{"flushSink":{"instance":\#(instance)}}"#.utf8)
        _ = frame.withUnsafeBufferPointer { plugin.sendRaw($0) }
    }

    /// Closes the plugin's instance in the helper (it flushes first); remove the sink from the
    /// ``LogSystem`` first.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let frame = Array(#"{"closeSink":{"instance":\#(instance)}}"#.utf8)
        _ = frame.withUnsafeBufferPointer { plugin.sendRaw($0) }
        plugin.forget(self)
    }
}
