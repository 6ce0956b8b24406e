// MARK: - Text and time formatting (no Foundation)

// Members rather than free functions, so nothing here can clash with other files of the module.
extension TimelinePage {
    /// HTML text and attribute escaping: & < > " '.
    func esc(_ s: String) -> String { Self.escapeHTML(s) }

    /// HTML text and attribute escaping: & < > " ' (the timeline's and the display report's).
    static func escapeHTML(_ s: String) -> String {
        var needs = false
        for u in s.utf8 where u == 0x26 || u == 0x3C || u == 0x3E || u == 0x22 || u == 0x27 { needs = true; break }
        guard needs else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        a - floorDiv(a, b) * b
    }

    func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    func clockParts(_ ns: Int64) -> (day: Int64, h: Int64, m: Int64, s: Int64, ns: Int64) {
        let dayNs: Int64 = 86_400_000_000_000
        let day = floorDiv(ns, dayNs)
        let rest = floorMod(ns, dayNs)
        let secs = rest / 1_000_000_000
        return (day, secs / 3600, secs / 60 % 60, secs % 60, rest % 1_000_000_000)
    }

    func isoDate(_ ns: Int64) -> String {
        let c = LogTime.civil(fromDays: clockParts(ns).day)
        return "\(pad(c.0, 4))-\(pad(c.1, 2))-\(pad(c.2, 2))"
    }

    /// 2024-05-14T18:30:00.123Z
    func iso(_ ns: Int64) -> String { LogTime.rfc3339(ns, fractionDigits: 3) }

    /// 18:30:00.123 (tooltips; the date is on the axis).
    func clock(_ ns: Int64) -> String {
        let p = clockParts(ns)
        return "\(pad(p.h, 2)):\(pad(p.m, 2)):\(pad(p.s, 2)).\(pad(p.ns / 1_000_000, 3))"
    }

    func fixed(_ v: Double, _ digits: Int) -> String {
        guard v.isFinite else { return v.isNaN ? "NaN" : (v < 0 ? "-∞" : "∞") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (Swift.abs(v) * scale).rounded()
        guard r < 9e15 else { return String(v) }
        let n = Int64(r)
        let ip = n / Int64(scale)
        let sign = v < 0 && n != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(ip) }
        return sign + String(ip) + "." + pad(n % Int64(scale), digits)
    }

    /// SVG coordinates: one decimal.
    func f1(_ v: Double) -> String { fixed(v, 1) }

    /// 1,234,567
    func grouped(_ n: Int) -> String {
        let s = String(Swift.abs(n))
        var out = ""
        for (i, c) in s.enumerated() {
            if i > 0 && (s.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    func formatLatency(_ ms: Double) -> String {
        guard ms.isFinite else { return "—" }
        if ms < 10 { return fixed(ms, 1) + " ms" }
        if ms < 1_000 { return fixed(ms, 0) + " ms" }
        return fixed(ms / 1_000, 2) + " s"
    }

    /// 850 ms · 12.3 s · 4m 05s · 2h 03m 05s · 3d 04h 10m
    func formatDuration(_ ns: Int64) -> String {
        if ns < 0 { return "-" + formatDuration(ns == Int64.min ? Int64.max : -ns) }
        if ns == 0 { return "0 ms" }
        if ns < 1_000_000 { return "<1 ms" }
        if ns < 1_000_000_000 { return "\(ns / 1_000_000) ms" }
        if ns < 60_000_000_000 { return fixed(Double(ns) / 1e9, ns < 10_000_000_000 ? 2 : 1) + " s" }
        let totalSeconds = ns / 1_000_000_000
        let s = totalSeconds % 60, m = totalSeconds / 60 % 60, h = totalSeconds / 3600 % 24, d = totalSeconds / 86_400
        if d > 0 { return "\(d)d \(pad(h, 2))h \(pad(m, 2))m" }
        if h > 0 { return "\(h)h \(pad(m, 2))m \(pad(s, 2))s" }
        return "\(m)m \(pad(s, 2))s"
    }
}
