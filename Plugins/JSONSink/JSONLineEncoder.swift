import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// Turns ABI log records into JSON Lines (schema in README.md), one line per record, into a
/// reusable byte buffer. Hand-rolled: no allocation per record once the buffer has grown.
struct JSONLineEncoder {
    private var cachedSecond: Int64 = -1
    private var cachedPrefix: [UInt8] = []

    /// OpenTelemetry severity text and number per ABI level (index = level).
    private static let severityText: [[UInt8]] = ["UNSPECIFIED", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].map { Array($0.utf8) }
    private static let severityNumber: [[UInt8]] = ["0", "1", "5", "9", "13", "17", "21"].map { Array($0.utf8) }
    private static let levelName: [[UInt8]] = ["none", "verbose", "debug", "info", "warning", "error", "assert"].map { Array($0.utf8) }

    /// Appends one line (with its `\n`) for `r`.
    mutating func encode(_ r: castline_log_record, into out: inout [UInt8]) {
        let level = Int(min(max(r.level, 0), 6))
        out.append(contentsOf: #"{"time":""#.utf8)
        appendTime(r.timestamp_ns, into: &out)
        out.append(contentsOf: #"","time_unix_nano":"#.utf8)
        appendInt(Int64(bitPattern: r.timestamp_ns), into: &out)
        out.append(contentsOf: #","severity_number":"#.utf8)
        out.append(contentsOf: Self.severityNumber[level])
        out.append(contentsOf: #","severity_text":""#.utf8)
        out.append(contentsOf: Self.severityText[level])
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: Self.levelName[level])
        out.append(contentsOf: #"","class":"#.utf8)
        appendString(r.class_name, r.class_name_length, into: &out)
        out.append(contentsOf: #","body":"#.utf8)
        appendString(r.message, r.message_length, into: &out)
        if r.field_count > 0, let fields = r.fields {
            out.append(contentsOf: #","attributes":{"#.utf8)
            for i in 0..<r.field_count {
                let f = fields[i]
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendString(f.key, f.key_length, into: &out)
                out.append(UInt8(ascii: ":"))
                switch f.value_type {
                case Int32(CASTLINE_VALUE_INT.rawValue): appendInt(f.int_value, into: &out)
                case Int32(CASTLINE_VALUE_DOUBLE.rawValue): appendDouble(f.double_value, into: &out)
                case Int32(CASTLINE_VALUE_BOOL.rawValue): out.append(contentsOf: (f.int_value != 0 ? "true" : "false").utf8)
                default: appendString(f.string, f.string_length, into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
        if r.file_length > 0 {
            out.append(contentsOf: #","code.filepath":"#.utf8)
            appendString(r.file, r.file_length, into: &out)
            out.append(contentsOf: #","code.lineno":"#.utf8)
            appendInt(Int64(r.line), into: &out)
        }
        if r.function_length > 0 {
            out.append(contentsOf: #","code.function":"#.utf8)
            appendString(r.function, r.function_length, into: &out)
        }
        out.append(contentsOf: "}\n".utf8)
    }

    /// `2026-11-22T10:15:30.123456789Z` (UTC). The part up to the seconds is cached per second.
    private mutating func appendTime(_ ns: UInt64, into out: inout [UInt8]) {
        let seconds = Int64(ns / 1_000_000_000)
        if seconds != cachedSecond {
            var t = time_t(seconds)
            var tm = tm()
            gmtime_r(&t, &tm)
            var prefix: [UInt8] = []
            func two(_ v: Int32) { prefix.append(UInt8(48 + v / 10)); prefix.append(UInt8(48 + v % 10)) }
            let year = Int(tm.tm_year) + 1900
            prefix.append(contentsOf: String(year).utf8)
            prefix.append(UInt8(ascii: "-")); two(tm.tm_mon + 1)
            prefix.append(UInt8(ascii: "-")); two(tm.tm_mday)
            prefix.append(UInt8(ascii: "T")); two(tm.tm_hour)
            prefix.append(UInt8(ascii: ":")); two(tm.tm_min)
            prefix.append(UInt8(ascii: ":")); two(tm.tm_sec)
            cachedPrefix = prefix
            cachedSecond = seconds
        }
        out.append(contentsOf: cachedPrefix)
        out.append(UInt8(ascii: "."))
        var frac = UInt32(ns % 1_000_000_000)
        var digits = [UInt8](repeating: 48, count: 9)
        for i in stride(from: 8, through: 0, by: -1) {
            digits[i] = UInt8(48 + frac % 10)
            frac /= 10
        }
        out.append(contentsOf: digits)
        out.append(UInt8(ascii: "Z"))
    }

    private func appendInt(_ value: Int64, into out: inout [UInt8]) {
        if value == 0 { out.append(48); return }
        var v = value.magnitude
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &tmp) { buf in
            while v > 0 {
                buf[19 - n] = UInt8(48 + v % 10)
                v /= 10
                n += 1
            }
            out.append(contentsOf: buf[(20 - n)...])
        }
    }

    private func appendDouble(_ value: Double, into out: inout [UInt8]) {
        // JSON has no NaN or infinity: those become strings.
        if value.isNaN || value.isInfinite {
            out.append(contentsOf: "\"\(value)\"".utf8)
        } else {
            out.append(contentsOf: "\(value)".utf8)
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends a JSON string literal; bytes that need no escape are copied in runs.
    private func appendString(_ p: UnsafePointer<CChar>?, _ length: Int, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        guard let p, length > 0 else { out.append(UInt8(ascii: "\"")); return }
        let bytes = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
        var runStart = 0
        for i in 0..<length {
            let c = bytes[i]
            guard c < 0x20 || c == 0x22 || c == 0x5C else { continue }
            if i > runStart { out.append(contentsOf: UnsafeBufferPointer(start: bytes + runStart, count: i - runStart)) }
            runStart = i + 1
            switch c {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            default: out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 48, 48, Self.hex[Int(c >> 4)], Self.hex[Int(c & 15)]])
            }
        }
        if length > runStart { out.append(contentsOf: UnsafeBufferPointer(start: bytes + runStart, count: length - runStart)) }
        out.append(UInt8(ascii: "\""))
    }
}
