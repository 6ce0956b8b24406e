import CastPluginKit
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
        var bound = 400 + 6 * (r.class_name_length + r.message_length + r.file_length + r.function_length)
        if let fields = r.fields {
            for i in 0..<r.field_count { bound += 40 + 6 * (fields[i].key_length + fields[i].string_length) }
        }
        out.reserve(bound)
        let level = Int(min(max(r.level, 0), 6))
        out.put(#"{"time":""#)
        appendTime(r.timestamp_ns, into: &out)
        out.put(#"","time_unix_nano":"#)
        // The seconds' digits were cached with the time prefix; the nanoseconds are 9 digits.
        withUnsafeBytes(of: &cachedSecondsDigits) { out.put($0.baseAddress!, cachedSecondsDigitsLength) }
        appendNineDigits(UInt32(r.timestamp_ns % 1_000_000_000), into: &out)
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
    private mutating func appendTime(_ ns: UInt64, into out: inout LineBuffer) {
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
        appendNineDigits(UInt32(ns % 1_000_000_000), into: &out)
        out.put(UInt8(ascii: "Z"))
    }

    /// Exactly nine digits, zero-padded.
    @inline(__always)
    private func appendNineDigits(_ value: UInt32, into out: inout LineBuffer) {
        var v = value
        let start = out.count
        out.count += 9
        for i in stride(from: start + 8, through: start, by: -1) {
            out.base[i] = UInt8(48 + v % 10)
            v /= 10
        }
    }

    private func appendUnsigned(_ value: UInt64, into out: inout LineBuffer) {
        if value == 0 {
            out.put(48)
            return
        }
        var digits = 0
        var v = value
        while v > 0 {
            digits += 1
            v /= 10
        }
        v = value
        let start = out.count
        out.count += digits
        var i = start + digits - 1
        while v > 0 {
            out.base[i] = UInt8(48 + v % 10)
            v /= 10
            i -= 1
        }
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

    /// True when the byte must be escaped in a JSON string: below 0x20, a quote or a backslash.
    @inline(__always)
    static func needsEscape(byte c: UInt8) -> Bool { c < 0x20 || c == 0x22 || c == 0x5C }

    /// True when one of the eight bytes is below 0x20, a quote or a backslash (SWAR: "has less
    /// than" and "has zero" bit tricks; bytes ≥ 0x80 never match).
    @inline(__always)
    static func needsEscape(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let below = (x &- ones &* 0x20) & ~x & highs
        let q = x ^ (ones &* 0x22), b = x ^ (ones &* 0x5C)
        let quote = (q &- ones) & ~q & highs
        let backslash = (b &- ones) & ~b & highs
        return (below | quote | backslash) != 0
    }

    /// Appends a JSON string literal. Eight bytes at a time are checked and stored as one word
    /// while none needs an escape (no `memcpy` call per string); a string of 8 bytes or more
    /// ends with one overlapping word. From the first byte that needs an escape on, bytes are
    /// copied in runs between escapes.
    private func appendString(_ p: UnsafePointer<CChar>?, _ length: Int, into out: inout LineBuffer) {
        out.put(UInt8(ascii: "\""))
        guard let p, length > 0 else {
            out.put(UInt8(ascii: "\""))
            return
        }
        let raw = UnsafeRawPointer(p)
        let outStart = out.count
        var i = 0
        if length < 8 {
            // Short (keys mostly): each byte stored as it is checked.
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            while i < length, !Self.needsEscape(byte: bytes[i]) {
                out.base[outStart &+ i] = bytes[i]
                i &+= 1
            }
        } else {
            // Destination and index in locals: the loop keeps them in registers.
            let destination = UnsafeMutableRawPointer(out.base + outStart)
            while i &+ 8 <= length {
                let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if Self.needsEscape(x) { break }
                destination.storeBytes(of: x, toByteOffset: i, as: UInt64.self)
                i &+= 8
            }
            if i < length, i &+ 8 > length {
                // Fewer than 8 bytes left and none escaped so far: check and store the last 8
                // bytes (overlapping what is already stored, which they equal).
                let x = raw.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
                if !Self.needsEscape(x) {
                    destination.storeBytes(of: x, toByteOffset: length &- 8, as: UInt64.self)
                    i = length
                }
            }
        }
        out.count = outStart &+ i
        if i < length { appendEscaping(raw.assumingMemoryBound(to: UInt8.self), from: i, length, into: &out) }
        out.put(UInt8(ascii: "\""))
    }

    /// The rest of a string from `start` (everything before it is stored): runs between escapes.
    private func appendEscaping(_ bytes: UnsafePointer<UInt8>, from start: Int, _ length: Int, into out: inout LineBuffer) {
        var runStart = start
        var i = start
        while i < length {
            // Eight bytes at a time while none needs an escape (< 0x20, '"', '\\').
            while i + 8 <= length {
                let x = UnsafeRawPointer(bytes + i).loadUnaligned(as: UInt64.self)
                if Self.needsEscape(x) { break }
                i += 8
            }
            guard i < length else { break }
            let c = bytes[i]
            if !Self.needsEscape(byte: c) {
                i += 1
                continue
            }
            if i > runStart { out.put(bytes + runStart, i - runStart) }
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
            runStart = i
        }
        if length > runStart { out.put(bytes + runStart, length - runStart) }
    }
}
