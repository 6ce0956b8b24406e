/// Journald field names for castline's structured fields.
///
/// journald keeps only names of `A-Z`, `0-9` and `_`, at most 64 characters, not starting with a
/// digit or an underscore, and silently drops entries' other fields. So: camelCase is split
/// (`requestId` → `REQUEST_ID`), letters are uppercased, every other character becomes `_`, runs
/// of `_` collapse, leading `_` are removed, a leading digit gets an `F` in front, an empty result
/// becomes `FIELD`, and the name is cut to 64. A name that would collide with a field the sink
/// writes itself or with a journal field of system meaning gets the `CASTLINE_` prefix
/// (`message` → `CASTLINE_MESSAGE`).
enum JournalFieldName {
    /// Fields the sink writes or that journald/systemd give a meaning to.
    static let reserved: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "ERRNO", "SYSLOG_IDENTIFIER",
        "SYSLOG_FACILITY", "SYSLOG_PID", "SYSLOG_TIMESTAMP", "SYSLOG_RAW", "TID", "UNIT", "USER_UNIT", "INVOCATION_ID",
        "USER_INVOCATION_ID", "DOCUMENTATION", "CASTLINE_CLASS", "CASTLINE_TIME_NS", "CASTLINE_LEVEL", "CASTLINE_TYPES", "OBJECT_PID", "COREDUMP_UNIT",
    ]

    static func sanitize(_ key: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count + 4)
        var previous: UInt8 = 0
        for c in key.utf8 {
            var mapped: UInt8
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): mapped = c - 32
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                // camelCase boundary: a capital after a lower-case letter or a digit.
                if (previous >= UInt8(ascii: "a") && previous <= UInt8(ascii: "z")) || (previous >= UInt8(ascii: "0") && previous <= UInt8(ascii: "9")) {
                    if out.last != UInt8(ascii: "_") { out.append(UInt8(ascii: "_")) }
                }
                mapped = c
            case UInt8(ascii: "0")...UInt8(ascii: "9"): mapped = c
            default: mapped = UInt8(ascii: "_")
            }
            if mapped == UInt8(ascii: "_"), out.last == UInt8(ascii: "_") || out.isEmpty {
                previous = c
                continue
            }
            out.append(mapped)
            previous = c
        }
        while out.last == UInt8(ascii: "_") { out.removeLast() }
        if out.isEmpty { return "FIELD" }
        if out[0] >= UInt8(ascii: "0") && out[0] <= UInt8(ascii: "9") { out.insert(UInt8(ascii: "F"), at: 0) }
        var name = String(decoding: out.prefix(64), as: UTF8.self)
        if reserved.contains(name) { name = String(("CASTLINE_" + name).prefix(64)) }
        return name
    }
}
