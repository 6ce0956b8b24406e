import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock times in a time zone, for reports a client reads: `2026-11-28 06:27:01`, with the
/// zone's offset (`+01:00`) and name. The zone is a tz database name (`Europe/Berlin`), `UTC`,
/// or nil for the system's (`TZ`, else `/etc/localtime`). The C library converts (`localtime_r`
/// under `TZ`); the zone is set for each conversion under one lock, so reports in different
/// zones never mix. Value type.
package struct LocalClock: Sendable {
    /// The zone's name as given, or the system's (`/etc/localtime`'s target under zoneinfo).
    package let zone: String
    private let tz: String?

    private static let lock = Mutex(())

    package struct UnknownZone: Error, CustomStringConvertible {
        package var zone: String
        package var description: String { "unknown time zone \"\(zone)\" (a tz database name such as Europe/Berlin, or UTC)" }
    }

    /// `zone` nil: the system's.
    package init(zone: String? = nil, environment: [String: String] = [:]) throws(UnknownZone) {
        if let zone {
            let known = zone == "UTC" || zone == "GMT" || (!zone.contains("..") && access("/usr/share/zoneinfo/" + zone, R_OK) == 0)
            guard known else { throw UnknownZone(zone: zone) }
            self.zone = zone
            tz = zone
        } else if let env = environment["TZ"], !env.isEmpty {
            self.zone = env.hasPrefix(":") ? String(env.dropFirst()) : env
            tz = env
        } else {
            self.zone = Self.systemZoneName() ?? "localtime"
            tz = nil
        }
    }

    /// The name `/etc/localtime` links to (`Europe/Berlin`), if it is a link into zoneinfo.
    static func systemZoneName() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/etc/localtime", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let range = target.firstRange(of: "zoneinfo/") else { return nil }
        return String(target[range.upperBound...])
    }

    /// The broken-down local time and the offset east of UTC in seconds.
    package func components(_ nanos: Int64) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int) {
        var seconds = nanos / 1_000_000_000
        if nanos % 1_000_000_000 < 0 { seconds -= 1 }
        var t = time_t(seconds)
        var out = tm()
        Self.lock.withLock { _ in
            let previous = getenv("TZ").map { String(cString: $0) }
            if let tz { setenv("TZ", tz, 1) } else { unsetenv("TZ") }
            tzset()
            localtime_r(&t, &out)
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return (Int(out.tm_year) + 1900, Int(out.tm_mon) + 1, Int(out.tm_mday), Int(out.tm_hour), Int(out.tm_min), Int(out.tm_sec),
                Int(out.tm_gmtoff))
    }

    private static func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }

    /// `2026-11-28 06:27:01`.
    package func dateTime(_ nanos: Int64) -> String {
        let c = components(nanos)
        return "\(c.year)-\(Self.two(c.month))-\(Self.two(c.day)) \(Self.two(c.hour)):\(Self.two(c.minute)):\(Self.two(c.second))"
    }

    /// `06:27:01`.
    package func time(_ nanos: Int64) -> String {
        let c = components(nanos)
        return "\(Self.two(c.hour)):\(Self.two(c.minute)):\(Self.two(c.second))"
    }

    /// `+01:00`.
    package func offset(_ nanos: Int64) -> String {
        let o = components(nanos).offset
        let sign = o < 0 ? "-" : "+"
        return "\(sign)\(Self.two(abs(o) / 3600)):\(Self.two(abs(o) % 3600 / 60))"
    }
}
