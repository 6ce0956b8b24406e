/// Timestamps: RFC 3339 with nanoseconds in UTC, both ways, without Foundation.
package enum LogTime {
    /// `2026-11-22T10:15:30.123456789Z`.
    package static func rfc3339(_ nanos: Int64, fractionDigits: Int = 9) -> String {
        // Floor division without overflow (Int64.min included).
        var seconds = nanos / 1_000_000_000
        var fraction = nanos % 1_000_000_000
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000_000_000
        }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if fractionDigits > 0 {
            let digits = min(fractionDigits, 9)
            var f = fraction
            for _ in 0..<(9 - digits) { f /= 10 }
            text += "." + pad(f, digits)
        }
        return text + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, or a date alone (`YYYY-MM-DD`, UTC
    /// midnight), to Unix nanoseconds.
    package static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard let y = number(0, 4), b.count >= 10, b[4] == 45, let mo = number(5, 2), b[7] == 45, let d = number(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        var seconds = days(fromCivil: y, mo, d) * 86_400
        if b.count == 10 {
            let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            return overflow ? nil : scaled
        }
        guard b.count >= 19, b[10] == 84 || b[10] == 116 || b[10] == 32, let h = number(11, 2), b[13] == 58, let mi = number(14, 2),
              b[16] == 58, let s = number(17, 2), h < 24, mi < 60, s < 61 else { return nil }
        seconds += h * 3600 + mi * 60 + s
        var i = 19
        var fraction: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 9 { fraction = fraction * 10 + Int64(b[i] - 48); digits += 1 }
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { fraction *= 10 }
        }
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            guard i + 1 == b.count else { return nil }
        } else if b[i] == 43 || b[i] == 45, let oh = number(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = number(i + 4, 2), i + 6 == b.count {
            let offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            seconds -= offset
        } else {
            return nil
        }
        // Years past 2262 do not fit Unix nanoseconds in Int64: not a time here.
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        let (total, overflow2) = scaled.addingReportingOverflow(fraction)
        return overflow2 ? nil : total
    }

    /// Howard Hinnant's days-from-civil.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
