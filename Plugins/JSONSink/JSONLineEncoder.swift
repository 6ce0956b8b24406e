import CastPluginKit
import CJSONScan
#if canImport(Glibc)
import Glibc
#endif

/// Turns ABI log records into JSON Lines (schema in README.md), one line per record, into a
/// ``LineBuffer``. Hand-rolled: one capacity check per record, no allocation once the buffer
/// has grown.
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
    mutating func encode(_ r: castline_log_record, into out: inout LineBuffer) {
        // Upper bound: every string byte may become a 6-byte escape; numbers ≤ 24 bytes each.
        var bound = 416 + 6 * (r.class_name_length + r.message_length + r.file_length + r.function_length)
        if let fields = r.fields {
            for i in 0..<r.field_count { bound += 40 + 6 * (fields[i].key_length + fields[i].string_length) }
        }
        out.reserve(bound)
        let level = Int(min(max(r.level, 0), 6))
        out.put(#"{"time":""#)
        let nanosecondDigits = appendTime(r.timestamp_ns, into: &out)
        out.put(#"","time_unix_nano":"#)
        // The seconds' digits were cached with the time prefix; the nanoseconds' nine digits are
        // the ones just written into the time.
        withUnsafeBytes(of: &cachedSecondsDigits) { out.put($0.baseAddress!, cachedSecondsDigitsLength) }
        out.put(out.base + nanosecondDigits, 9)
        out.put(UInt8(ascii: ","))
        out.put(Self.severity(level))
        out.put(#","class":"#)
        appendString(r.class_name, r.class_name_length, into: &out)
        out.put(#","body":"#)
        appendString(r.message, r.message_length, into: &out)
        if r.field_count > 0, let fields = r.fields {
            out.put(#","attributes":{"#)
            for i in 0..<r.field_count {
                let f = fields[i]
                if i > 0 { out.put(UInt8(ascii: ",")) }
                appendString(f.key, f.key_length, into: &out)
                out.put(UInt8(ascii: ":"))
                switch f.value_type {
                case Int32(CASTLINE_VALUE_INT.rawValue): appendSigned(f.int_value, into: &out)
                case Int32(CASTLINE_VALUE_DOUBLE.rawValue): appendDouble(f.double_value, into: &out)
                case Int32(CASTLINE_VALUE_BOOL.rawValue): out.put(f.int_value != 0 ? "true" : "false")
                default: appendString(f.string, f.string_length, into: &out)
                }
            }
            out.put(UInt8(ascii: "}"))
        }
        if r.file_length > 0 {
            out.put(#","code.filepath":"#)
            appendString(r.file, r.file_length, into: &out)
            out.put(#","code.lineno":"#)
            appendUnsigned(UInt64(r.line), into: &out)
        }
        if r.function_length > 0 {
            out.put(#","code.function":"#)
            appendString(r.function, r.function_length, into: &out)
        }
        out.put("}\n")
    }

    /// `2026-11-22T10:15:30.123456789Z` (UTC). The part up to the seconds is cached per second.
    /// Returns where the nine digits of the nanoseconds start in `out`.
    private mutating func appendTime(_ ns: UInt64, into out: inout LineBuffer) -> Int {
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
        withUnsafeBytes(of: &cachedPrefix) { out.put($0.baseAddress!, cachedPrefixLength) }
        out.put(UInt8(ascii: "."))
        let digits = out.count
        appendNineDigits(UInt32(ns % 1_000_000_000), into: &out)
        out.put(UInt8(ascii: "Z"))
        return digits
    }

    /// "00" to "99": numbers are written two digits per division.
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// Stores the two digits of `pair` (0…99) at `p`.
    @inline(__always)
    private static func putPair(_ pair: Int, at p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).copyMemory(from: digitPairs.utf8Start + 2 &* pair, byteCount: 2)
    }

    /// Exactly nine digits, zero-padded.
    @inline(__always)
    private func appendNineDigits(_ value: UInt32, into out: inout LineBuffer) {
        var v = Int(value)
        let p = out.base + out.count
        out.count &+= 9
        for i in stride(from: 7, through: 1, by: -2) {
            Self.putPair(v % 100, at: p + i)
            v /= 100
        }
        p[0] = UInt8(truncatingIfNeeded: 48 &+ v)
    }

    private func appendUnsigned(_ value: UInt64, into out: inout LineBuffer) {
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20, value >= bound {
            digits &+= 1
            bound = bound &* 10
        }
        let p = out.base + out.count
        out.count &+= digits
        var v = value
        var i = digits
        while i >= 2 {
            Self.putPair(Int(v % 100), at: p + i - 2)
            v /= 100
            i &-= 2
        }
        if i == 1 { p[0] = UInt8(truncatingIfNeeded: 48 &+ v) }
    }

    private func appendSigned(_ value: Int64, into out: inout LineBuffer) {
        if value < 0 { out.put(UInt8(ascii: "-")) }
        appendUnsigned(value.magnitude, into: &out)
    }

    private func appendDouble(_ value: Double, into out: inout LineBuffer) {
        // JSON has no NaN or infinity: those become strings.
        var text = value.isNaN || value.isInfinite ? "\"\(value)\"" : "\(value)"
        text.withUTF8 { out.put($0.baseAddress!, min($0.count, 24)) }
    }

    private static let hex: StaticString = "0123456789abcdef"

    /// Appends a JSON string literal. The bytes that need no escape are found and copied 16 at a
    /// time by `castline_json_copy_plain` (SSE2/NEON, in C); from the first byte that needs an
    /// escape on, runs between escapes.
    private func appendString(_ p: UnsafePointer<CChar>?, _ length: Int, into out: inout LineBuffer) {
        out.put(UInt8(ascii: "\""))
        guard let p, length > 0 else {
            out.put(UInt8(ascii: "\""))
            return
        }
        let bytes = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
        let plain = castline_json_copy_plain(out.base + out.count, bytes, length)
        out.count &+= plain
        if plain < length { appendEscaping(bytes, from: plain, length, into: &out) }
        out.put(UInt8(ascii: "\""))
    }

    /// The rest of a string from `start`, whose byte needs an escape: each escape, then the
    /// plain run after it through the scanner.
    private func appendEscaping(_ bytes: UnsafePointer<UInt8>, from start: Int, _ length: Int, into out: inout LineBuffer) {
        var i = start
        while i < length {
            let c = bytes[i]
            switch c {
            case 0x22: out.put(#"\""#)
            case 0x5C: out.put(#"\\"#)
            case 0x0A: out.put(#"\n"#)
            case 0x0D: out.put(#"\r"#)
            case 0x09: out.put(#"\t"#)
            default:
                out.put(#"\u00"#)
                out.put(Self.hex.utf8Start[Int(c >> 4)])
                out.put(Self.hex.utf8Start[Int(c & 15)])
            }
            i += 1
            let plain = castline_json_copy_plain(out.base + out.count, bytes + i, length - i)
            out.count += plain
            i += plain
        }
    }
}
