import Logging

/// A swift-log `LogHandler` that routes other libraries' logs (SwiftNIO, …) through castline's
/// filter and sinks. The swift-log label becomes the record's class name; `source` and metadata
/// become fields.
///
/// The filter is the single source of truth: `logLevel` reports the lowest level the filter lets
/// through for this label, and setting it can only raise the bar for this handler value (value
/// semantics, as swift-log requires). Bootstrap it once, in the executable:
/// `LoggingSystem.bootstrap { CastLogHandler(label: $0) }`.
public struct CastLogHandler: LogHandler {
    public var metadata: Logging.Logger.Metadata = [:]
    public var metadataProvider: Logging.Logger.MetadataProvider?
    private var levelOverride: Logging.Logger.Level?
    private let handle: LogClassHandle

    public init(label: String, system: LogSystem = .shared, metadataProvider: Logging.Logger.MetadataProvider? = nil) {
        self.handle = system.handle(forClass: label)
        self.metadataProvider = metadataProvider
    }

    public var logLevel: Logging.Logger.Level {
        get {
            let rank = UInt8(truncatingIfNeeded: handle.state())
            let fromFilter = LogLevel(rawValue: min(rank, 6))?.swiftLogLevel ?? .critical
            guard let levelOverride else { return fromFilter }
            return max(levelOverride, fromFilter)
        }
        set { levelOverride = newValue }
    }

    public subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        if let levelOverride, event.level < levelOverride { return }
        var fields = LogFields()
        fields["source"] = .string(event.source)
        var merged = self.metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        for key in merged.keys.sorted() {
            fields[key] = CastLogHandler.value(merged[key]!)
        }
        if let error = event.error { fields["error"] = .string(String(describing: error)) }
        handle.submit(LogRecord(
            level: LogLevelMapping.level(for: event.level), className: handle.className, function: event.function,
            file: event.file, line: event.line, message: event.message.description, fields: fields))
    }

    static func value(_ v: Logging.Logger.Metadata.Value) -> LogValue {
        switch v {
        case .string(let s): return .string(s)
        case .stringConvertible(let c):
            switch c {
            case let i as Int: return .int(i)
            case let b as Bool: return .bool(b)
            case let d as Double: return .double(d)
            default: return .string(c.description)
            }
        case .array, .dictionary: return .string(v.description)
        }
    }
}
