import CastCore
import CastLogging

/// One log record read back from castline's JSON Lines files or from the journal, in one shape
/// whatever it came from. Value type.
public struct LogEntry: Sendable, Equatable {
    /// Unix time in nanoseconds.
    package var time: Int64
    package var level: LogLevel
    /// The emitting class (`CastSession`, `CastChannel.com.google.cast.media`).
    package var className: String
    package var body: String
    /// Structured fields with their JSON types (journal fields come back as strings).
    package var attributes: JSONObject
    package var file: String?
    package var line: Int?
    package var function: String?
    /// Where it was read: the input's name and the 1-based line (journal: the entry's index).
    package var origin: LogOrigin
    /// The host the journal says wrote it (`_HOSTNAME`; a central journal-remote folder holds
    /// many); nil for JSON Lines.
    package var host: String?

    package init(time: Int64, level: LogLevel, className: String, body: String, attributes: JSONObject = JSONObject(),
                file: String? = nil, line: Int? = nil, function: String? = nil, origin: LogOrigin = LogOrigin(input: "", line: 0)) {
        self.time = time
        self.level = level
        self.className = className
        self.body = body
        self.attributes = attributes
        self.file = file
        self.line = line
        self.function = function
        self.origin = origin
    }

    /// An attribute as text (`"3"` for the integer 3), or nil.
    package func text(_ key: String) -> String? {
        switch attributes[key] {
        case .string(let s)?: return s
        case .int(let i)?: return String(i)
        case .double(let d)?: return String(d)
        case .bool(let b)?: return b ? "true" : "false"
        default: return nil
        }
    }

    package func integer(_ key: String) -> Int64? {
        switch attributes[key] {
        case .int(let i)?: return i
        case .string(let s)?: return Int64(s)
        case .double(let d)?: return d == d.rounded() ? Int64(exactly: d) : nil
        default: return nil
        }
    }

    /// The agent (site) that wrote it: castline's `agent` field, else the journal's host name.
    package var agent: String? { text("agent") ?? host }

    /// The device this record is about: `device` (a device id), else the connection's `peer`.
    package var device: String? { text("device") ?? text("peer") }

    /// The record as castline's JSON Lines schema (version 1), for `logs query --json`.
    package var json: JSONValue {
        var o = JSONObject()
        o.set("time", .string(LogTime.rfc3339(time)))
        o.set("time_unix_nano", .int(time))
        let row = LogLevelMapping.row(for: level)
        o.set("severity_number", .int(Int64(row.otelSeverityNumber)))
        o.set("severity_text", .string(row.otelSeverityText))
        o.set("level", .string(level.name))
        o.set("class", .string(className))
        o.set("body", .string(body))
        if !attributes.isEmpty { o.set("attributes", .object(attributes)) }
        if let file { o.set("code.filepath", .string(file)) }
        if let line { o.set("code.lineno", .int(Int64(line))) }
        if let function { o.set("code.function", .string(function)) }
        return .object(o)
    }
}

/// Where a record was read.
public struct LogOrigin: Sendable, Equatable, CustomStringConvertible {
    package var input: String
    package var line: Int

    public init(input: String, line: Int) {
        self.input = input
        self.line = line
    }

    public var description: String { "\(input):\(line)" }
}
