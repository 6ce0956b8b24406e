import CastJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Renders a record as one line of text for terminals and plain files.
///
/// ``Style/short`` (the console's default), for people: local time, level, class and message.
/// A debug or verbose record adds its fields and source location, which is what it is for:
///
/// `16:30:00.123 INFO  CastSession: session started`
///
/// ``Style/detailed``, for plain files and log collectors without a JSON parser: UTC time and
/// every record's fields and location:
///
/// `2026-11-21T16:30:00.123456Z INFO  CastSession: session started device=abc (CastSender/CastSession.swift:42 start())`
///
/// Either way a record is one line: control characters in the message and in field values are
/// escaped as JSON escapes them (CastJSON's escaper); a string field that is empty or holds a
/// space, `"` or `=` is written as a JSON string literal. The JSON and journald sinks keep every
/// field whatever the console shows.
public struct LogRecordFormatter: Sendable {
    public enum Style: String, Sendable, CaseIterable {
        case short, detailed
    }

    public var color: Bool
    public var style: Style

    public init(color: Bool = false, style: Style = .detailed) {
        self.color = color
        self.style = style
    }

    public func format(_ r: LogRecord) -> String {
        var out = JSONWriter(capacity: 256)
        let detailed = style == .detailed || r.level <= .debug
        out.append(contentsOf: style == .detailed ? LogRecordFormatter.timestamp(r.timestampNanos) : LogRecordFormatter.localTime(r.timestampNanos))
        out.append(" ")
        let tag = LogLevelMapping.row(for: r.level).consoleTag
        if color {
            out.append(contentsOf: LogRecordFormatter.ansi(for: r.level) + tag + "\u{1B}[0m")
        } else {
            out.append(contentsOf: tag)
        }
        out.append(" ")
        out.append(contentsOf: color ? "\u{1B}[1m" + r.className + "\u{1B}[0m" : r.className)
        out.append(": ")
        LogRecordFormatter.appendEscaped(r.message, to: &out)
        guard detailed else { return String(decoding: out.bytes, as: UTF8.self) }
        for (key, value) in r.fields {
            out.append(" ")
            out.append(contentsOf: key)
            out.append("=")
            let text = value.description
            if case .string = value, text.isEmpty || text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) {
                out.write(string: text)
            } else {
                LogRecordFormatter.appendEscaped(text, to: &out)
            }
        }
        if !r.file.isEmpty {
            out.append(contentsOf: " (\(r.file):\(r.line) \(r.function))")
        }
        return String(decoding: out.bytes, as: UTF8.self)
    }

    static func ansi(for level: LogLevel) -> String {
        switch level {
        case .none, .verbose: return "\u{1B}[90m"
        case .debug: return "\u{1B}[36m"
        case .info: return "\u{1B}[32m"
        case .warning: return "\u{1B}[33m"
        case .error: return "\u{1B}[31m"
        case .assert: return "\u{1B}[1;31m"
        }
    }

    /// `text` with its control characters escaped as in JSON (`\n`, `\t`, `\u001b`), so a record
    /// is always one line; quotes and backslashes stay as they are.
    static func appendEscaped(_ text: String, to out: inout JSONWriter) {
        var text = text
        text.withUTF8 { out.writeEscaped($0, quotesAndBackslashes: false) }
    }

    /// Local wall-clock time with milliseconds: `16:30:00.123`.
    public static func localTime(_ nanos: UInt64) -> String {
        var seconds = time_t(nanos / 1_000_000_000)
        let millis = Int(nanos % 1_000_000_000 / 1_000_000)
        var t = tm()
        localtime_r(&seconds, &t)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(Int(t.tm_hour), 2) + ":" + pad(Int(t.tm_min), 2) + ":" + pad(Int(t.tm_sec), 2) + "." + pad(millis, 3)
    }

    /// RFC 3339 UTC with microseconds: `2026-11-21T16:30:00.123456Z`.
    public static func timestamp(_ nanos: UInt64) -> String {
        var seconds = time_t(nanos / 1_000_000_000)
        let micros = Int(nanos % 1_000_000_000 / 1000)
        var t = tm()
        gmtime_r(&seconds, &t)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(Int(t.tm_year) + 1900, 4) + "-" + pad(Int(t.tm_mon) + 1, 2) + "-" + pad(Int(t.tm_mday), 2)
            + "T" + pad(Int(t.tm_hour), 2) + ":" + pad(Int(t.tm_min), 2) + ":" + pad(Int(t.tm_sec), 2)
            + "." + pad(micros, 6) + "Z"
    }
}
