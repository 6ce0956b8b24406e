#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Renders a record as one line of text for terminals and plain files:
///
/// `2026-11-21T16:30:00.123456Z INFO  CastSession: session started device=abc (CastSender/CastSession.swift:42 start())`
///
/// Newlines and control characters in the message are escaped so a record is always one line.
public struct LogRecordFormatter: Sendable {
    public var color: Bool
    public var showLocation: Bool

    public init(color: Bool = false, showLocation: Bool = true) {
        self.color = color
        self.showLocation = showLocation
    }

    public func format(_ r: LogRecord) -> String {
        var out = LogRecordFormatter.timestamp(r.timestampNanos)
        out += " "
        let tag = LogLevelMapping.row(for: r.level).consoleTag
        if color {
            out += LogRecordFormatter.ansi(for: r.level) + tag + "\u{1B}[0m"
        } else {
            out += tag
        }
        out += " "
        out += color ? "\u{1B}[1m" + r.className + "\u{1B}[0m" : r.className
        out += ": "
        LogRecordFormatter.appendEscaped(r.message, to: &out)
        for (key, value) in r.fields {
            out += " "
            out += key
            out += "="
            let text = value.description
            if case .string = value, text.isEmpty || text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) {
                out += "\""
                LogRecordFormatter.appendEscaped(text.replacingOccurrences(of: "\"", with: "\\\""), to: &out)
                out += "\""
            } else {
                LogRecordFormatter.appendEscaped(text, to: &out)
            }
        }
        if showLocation, !r.file.isEmpty {
            out += " (\(r.file):\(r.line) \(r.function))"
        }
        return out
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

    static func appendEscaped(_ text: String, to out: inout String) {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            out += text
            return
        }
        for s in text.unicodeScalars {
            switch s {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if s.value < 0x20 || s.value == 0x7F {
                    out += "\\u{" + String(s.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
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

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
