import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The `json` log sink: JSON Lines (schema in README.md) to a file with size-based rotation, or
/// to stdout.
///
/// Options: `path` (a file, or `-` for stdout; default `-`), `max_bytes` (default 2 MiB),
/// `max_files` (files kept including the current one, default 5), `fsync` (fdatasync on flush,
/// default false). Unknown options are refused so a typo is not silently ignored.
final class JSONSink: LogSinkPlugin {
    static let allowedOptions: Set<String> = ["path", "max_bytes", "max_files", "fsync"]
    private var encoder = JSONLineEncoder()
    private let file: LineFile
    /// Used by `write` only (one thread, accesses never overlap): without Swift's dynamic
    /// exclusivity checks, which cost more per record than the copies.
    @exclusivity(unchecked) private var buffer = JSONWriter(capacity: 1 << 16)
    private var lineEnds: [Int] = []

    init(host: PluginHostServices, options: String) throws(PluginError) {
        let json = try JSONValue.parsePluginInput(options)
        guard case .object(let o) = json else { throw PluginError("json sink options must be an object") }
        if let unknown = o.keys.sorted().first(where: { !Self.allowedOptions.contains($0) }) {
            throw PluginError("json sink: unknown option \"\(unknown)\" (allowed: \(Self.allowedOptions.sorted().joined(separator: ", ")))")
        }
        let path = o["path"]?.string ?? "-"
        guard !path.isEmpty else { throw PluginError("json sink: path is empty (use \"-\" for stdout)") }
        let maxBytes = o["max_bytes"].map { $0.int.flatMap { Int(exactly: $0) } } ?? 2 * 1024 * 1024
        let maxFiles = o["max_files"].map { $0.int.flatMap { Int(exactly: $0) } } ?? 5
        guard let maxBytes, maxBytes >= 4096 else { throw PluginError("json sink: max_bytes must be an integer ≥ 4096") }
        guard let maxFiles, (1...1000).contains(maxFiles) else { throw PluginError("json sink: max_files must be an integer 1…1000") }
        let fsync = o["fsync"]?.bool ?? false
        file = try LineFile(path: path == "-" ? nil : path, maxBytes: maxBytes, maxFiles: maxFiles, syncOnFlush: fsync)
        if file.repairedBytes > 0 {
            writeOwnRecord(level: .warning, "removed a partial last line (\(file.repairedBytes) bytes) left by an earlier crash")
        }
    }

    func write(_ records: UnsafeBufferPointer<castline_log_record>) {
        buffer.removeAll()
        // Locals moved out of the properties (the encoder is a small struct): no exclusivity
        // checks and no uniqueness checks in the loop.
        var lineEnds = self.lineEnds
        self.lineEnds = []
        lineEnds.removeAll(keepingCapacity: true)
        var encoder = self.encoder
        for r in records {
            encoder.encode(r, into: &buffer)
            lineEnds.append(buffer.count)
        }
        self.encoder = encoder
        file.append(buffer.bytes, lineEnds: lineEnds)
        self.lineEnds = lineEnds
    }

    func flush() { file.flush() }

    func close() { file.flush() }

    var dropped: UInt64 { file.droppedLines }

    /// A write or rotation failure (full disk, unwritable folder) until a write goes through again;
    /// the host reports it once.
    var problem: String? { file.lastError }

    /// A record of the sink itself, written straight to its file (a sink cannot log through the host).
    private func writeOwnRecord(level: PluginLogLevel, _ message: String) {
        var text = message
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        text.withUTF8 { m in
            m.withMemoryRebound(to: CChar.self) { m in
                "JSONSink".withCString { cls in
                    let r = castline_log_record(
                        timestamp_ns: UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec), level: level.rawValue, line: 0,
                        class_name: cls, class_name_length: 8, message: m.baseAddress, message_length: m.count,
                        file: nil, file_length: 0, function: nil, function_length: 0, fields: nil, field_count: 0)
                    withUnsafePointer(to: r) { write(UnsafeBufferPointer(start: $0, count: 1)) }
                }
            }
        }
    }
}

/// The plugin: one log-sink feature, `json`.
enum JSONSinkPlugin: CastlinePlugin {
    static let id = "json-sink"
    static let version = "1.0.0"
    static let summary = "JSON Lines log sink with size-based rotation (OpenTelemetry-like schema)"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.logSink(JSONSink.self, id: "json")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(JSONSinkPlugin.self) }
