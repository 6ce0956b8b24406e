import Logging

/// A log level, numbered exactly like `GCKLoggerLevel` (none 0 … assert 6).
///
/// Levels order by severity: `verbose < debug < info < warning < error < assert`. `none` is
/// special: as a *threshold* it disables everything; a record is never logged at `none`.
/// Every conversion to another level scheme goes through ``LogLevelMapping`` (one table).
public enum LogLevel: UInt8, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case none = 0
    case verbose = 1
    case debug = 2
    case info = 3
    case warning = 4
    case error = 5
    case assert = 6

    /// Lower-case name used in rule strings, configs and JSON (`"warning"`).
    public var name: String { LogLevelMapping.row(for: self).name }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The value a threshold compare uses: `none` sorts above `assert` so that it passes nothing.
    @inlinable
    public var thresholdRank: UInt8 { self == .none ? 7 : rawValue }

    /// Parses a level name (case-insensitive; aliases `trace`, `warn`, `off`, `critical`, `fatal`) or a
    /// GCK number `0`…`6`. Returns nil for anything else.
    public init?(parsing text: some StringProtocol) {
        if let digit = UInt8(text), let level = LogLevel(rawValue: digit) {
            self = level
            return
        }
        let lowered = text.lowercased()
        guard let row = LogLevelMapping.table.first(where: { $0.name == lowered || $0.aliases.contains(lowered) })
        else { return nil }
        self = row.level
    }

    /// All accepted spellings, for error messages.
    public static var spellings: String {
        LogLevelMapping.table.map(\.name).joined(separator: ", ") + " or 0-6"
    }
}

/// The one table that maps castline levels to swift-log, journald `PRIORITY`, OpenTelemetry
/// severity and a fixed-width console tag.
///
/// Rows follow the level cross-walk in the logging notes: verbose → trace/7/TRACE(1), debug →
/// debug/7/DEBUG(5), info → info/6/INFO(9), warning → warning/4/WARN(13), error → error/3/ERROR(17),
/// assert → critical/2/FATAL(21). swift-log's `notice` has no GCK level and maps to `info`.
public enum LogLevelMapping {
    /// One row of the mapping table.
    public struct Row: Sendable {
        public let level: LogLevel
        public let name: String
        public let aliases: [String]
        /// swift-log level; nil for `none`.
        public let swiftLog: Logging.Logger.Level?
        /// journald / syslog `PRIORITY` (0 emerg … 7 debug); nil for `none`.
        public let journaldPriority: Int?
        /// OpenTelemetry `SeverityNumber` (0 = unspecified).
        public let otelSeverityNumber: Int
        /// OpenTelemetry `SeverityText`.
        public let otelSeverityText: String
        /// Five-character tag for console output.
        public let consoleTag: String
    }

    public static let table: [Row] = [
        Row(level: .none, name: "none", aliases: ["off"], swiftLog: nil, journaldPriority: nil,
            otelSeverityNumber: 0, otelSeverityText: "UNSPECIFIED", consoleTag: "NONE "),
        Row(level: .verbose, name: "verbose", aliases: ["trace"], swiftLog: .trace, journaldPriority: 7,
            otelSeverityNumber: 1, otelSeverityText: "TRACE", consoleTag: "VERB "),
        Row(level: .debug, name: "debug", aliases: [], swiftLog: .debug, journaldPriority: 7,
            otelSeverityNumber: 5, otelSeverityText: "DEBUG", consoleTag: "DEBUG"),
        Row(level: .info, name: "info", aliases: ["notice"], swiftLog: .info, journaldPriority: 6,
            otelSeverityNumber: 9, otelSeverityText: "INFO", consoleTag: "INFO "),
        Row(level: .warning, name: "warning", aliases: ["warn"], swiftLog: .warning, journaldPriority: 4,
            otelSeverityNumber: 13, otelSeverityText: "WARN", consoleTag: "WARN "),
        Row(level: .error, name: "error", aliases: ["err"], swiftLog: .error, journaldPriority: 3,
            otelSeverityNumber: 17, otelSeverityText: "ERROR", consoleTag: "ERROR"),
        Row(level: .assert, name: "assert", aliases: ["critical", "fatal"], swiftLog: .critical, journaldPriority: 2,
            otelSeverityNumber: 21, otelSeverityText: "FATAL", consoleTag: "ASSRT"),
    ]

    /// The row for a level.
    public static func row(for level: LogLevel) -> Row { table[Int(level.rawValue)] }

    /// The castline level for a swift-log level (`notice` → `info`).
    public static func level(for swiftLogLevel: Logging.Logger.Level) -> LogLevel {
        switch swiftLogLevel {
        case .trace: return .verbose
        case .debug: return .debug
        case .info, .notice: return .info
        case .warning: return .warning
        case .error: return .error
        case .critical: return .assert
        }
    }
}

extension LogLevel {
    /// swift-log level (`none` → nil).
    public var swiftLogLevel: Logging.Logger.Level? { LogLevelMapping.row(for: self).swiftLog }
    /// journald `PRIORITY` (`none` → nil).
    public var journaldPriority: Int? { LogLevelMapping.row(for: self).journaldPriority }
    /// OpenTelemetry `SeverityNumber`.
    public var otelSeverityNumber: Int { LogLevelMapping.row(for: self).otelSeverityNumber }
    /// OpenTelemetry `SeverityText`.
    public var otelSeverityText: String { LogLevelMapping.row(for: self).otelSeverityText }
}
