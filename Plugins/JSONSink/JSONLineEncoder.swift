import CastJSON
import CastPluginKit
#if canImport(Glibc)
import Glibc
#endif

/// Turns ABI log records into JSON Lines (schema in README.md), one line per record, into a
/// ``JSONWriter`` (CastJSON's writer and escaper). No allocation once the writer has grown.
struct JSONLineEncoder {
    private var cachedSecond: Int64 = -1
    /// `2026-11-22T10:15:30` for ``cachedSecond``.
    private var cachedPrefix: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private var cachedPrefixLength = 0
    /// The decimal digits of ``cachedSecond`` (`time_unix_nano` without its last 9 digits).
    private var cachedSecondsDigits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private var cachedSecondsDigitsLength = 0

    /// `"severity_number":N,"severity_text":"T","level":"L"` (OpenTelemetry severity number and
    /// text, castline level name) per ABI level 0…6: a switch over literals, not static arrays
    /// (each access to a global array costs an initialization check and a retain/release pair).
    @inline(__always)
    private static func severity(_ level: Int) -> StaticString {
        switch level {
        case 1: return #""severity_number":1,"severity_text":"TRACE","level":"verbose""#
        case 2: return #""severity_number":5,"severity_text":"DEBUG","level":"debug""#
        case 3: return #""severity_number":9,"severity_text":"INFO","level":"info""#
        case 4: return #""severity_number":13,"severity_text":"WARN","level":"warning""#
        case 5: return #""severity_number":17,"severity_text":"ERROR","level":"error""#
        case 6: return #""severity_number":21,"severity_text":"FATAL","level":"assert""#
        default: return #""severity_number":0,"severity_text":"UNSPECIFIED","level":"none""#
        }
    }

    /// Appends one line (with its `\n`) for `r`.
    mutating func encode(_ r: castline_log_record, into out: inout JSONWriter) {
        let level = Int(min(max(r.level, 0), 6))
        out.append(#"{"time":""#)
        appendTime(r.timestamp_ns, into: &out)
        out.append(#"","time_unix_nano":"#)
        if cachedSecond > 0 {
            withUnsafeBytes(of: &cachedSecondsDigits) { out.append(UnsafeRawBufferPointer(rebasing: $0[..<cachedSecondsDigitsLength])) }
            out.write(unsigned: r.timestamp_ns % 1_000_000_000, minimumDigits: 9)
        } else {
            out.write(unsigned: r.timestamp_ns)  // no leading zeros before the first second
        }
        out.append(UInt8(ascii: ","))
        out.append(Self.severity(level))
        out.append(#","class":"#)
        appendString(r.class_name, r.class_name_length, into: &out)
        out.append(#","body":"#)
        appendString(r.message, r.message_length, into: &out)
        if r.field_count > 0, let fields = r.fields {
            out.append(#","attributes":{"#)
            for i in 0..<r.field_count {
                let f = fields[i]
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendString(f.key, f.key_length, into: &out)
                out.append(UInt8(ascii: ":"))
                switch f.value_type {
                case Int32(CASTLINE_VALUE_INT.rawValue): out.write(integer: f.int_value)
                case Int32(CASTLINE_VALUE_DOUBLE.rawValue):
                    // JSON has no NaN or infinity: those become strings.
                    if f.double_value.isFinite { out.write(double: f.double_value) } else { out.write(string: f.double_value.description) }
                case Int32(CASTLINE_VALUE_BOOL.rawValue): out.append(f.int_value != 0 ? "true" : "false")
                default: appendString(f.string, f.string_length, into: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
        if r.file_length > 0 {
            out.append(#","code.filepath":"#)
            appendString(r.file, r.file_length, into: &out)
            out.append(#","code.lineno":"#)
            out.write(unsigned: UInt64(r.line))
        }
        if r.function_length > 0 {
            out.append(#","code.function":"#)
            appendString(r.function, r.function_length, into: &out)
        }
        out.append("}\n")
    }

    /// `2026-11-22T10:15:30.123456789Z` (UTC). The part up to the seconds is cached per second,
    /// with the seconds' decimal digits for `time_unix_nano`.
    private mutating func appendTime(_ ns: UInt64, into out: inout JSONWriter) {
        let seconds = Int64(ns / 1_000_000_000)
        if seconds != cachedSecond {
            var t = time_t(seconds)
            var tm = tm()
            gmtime_r(&t, &tm)
            var prefix: [UInt8] = []
            func two(_ v: Int32) { prefix.append(UInt8(48 + v / 10)); prefix.append(UInt8(48 + v % 10)) }
            prefix.append(contentsOf: String(Int(tm.tm_year) + 1900).utf8)
            prefix.append(UInt8(ascii: "-")); two(tm.tm_mon + 1)
            prefix.append(UInt8(ascii: "-")); two(tm.tm_mday)
            prefix.append(UInt8(ascii: "T")); two(tm.tm_hour)
            prefix.append(UInt8(ascii: ":")); two(tm.tm_min)
            prefix.append(UInt8(ascii: ":")); two(tm.tm_sec)
            cachedPrefixLength = min(prefix.count, 24)
            withUnsafeMutableBytes(of: &cachedPrefix) { raw in
                for i in 0..<cachedPrefixLength { raw[i] = prefix[i] }
            }
            let digits = Array(String(seconds).utf8)
            cachedSecondsDigitsLength = min(digits.count, 24)
            withUnsafeMutableBytes(of: &cachedSecondsDigits) { raw in
                for i in 0..<cachedSecondsDigitsLength { raw[i] = digits[i] }
            }
            cachedSecond = seconds
        }
        withUnsafeBytes(of: &cachedPrefix) { out.append(UnsafeRawBufferPointer(rebasing: $0[..<cachedPrefixLength])) }
        out.append(UInt8(ascii: "."))
        out.write(unsigned: ns % 1_000_000_000, minimumDigits: 9)
        out.append(UInt8(ascii: "Z"))
    }

    /// A JSON string literal of `length` bytes at `p` (none: `""`).
    @inline(__always)
    private func appendString(_ p: UnsafePointer<CChar>?, _ length: Int, into out: inout JSONWriter) {
        let bytes = UnsafeRawPointer(p)?.assumingMemoryBound(to: UInt8.self)
        out.write(string: UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : length))
    }
}
