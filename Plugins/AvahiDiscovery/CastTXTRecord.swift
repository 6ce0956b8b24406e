import CastPluginKit

/// The TXT record of a `_googlecast._tcp` service: `id`, `fn`, `md`, `ca`, `st`, `rs`, `ve`, `ic`.
///
/// Keys are case-insensitive (RFC 6763 §6.4); the first occurrence wins; a key without `=` is
/// present with an empty value. Values are UTF-8 (invalid bytes are replaced).
struct CastTXTRecord: Equatable {
    var id: String?
    var friendlyName: String?
    var model: String?
    /// `ca`: capability bits (decimal).
    var capabilities: UInt64?
    /// `st`: 1 when an app other than the idle screen runs.
    var busy: Bool?
    /// `rs`: what the device shows now; empty when idle.
    var statusText: String?
    /// `ve`: protocol version, two digits.
    var version: String?
    /// `ic`: icon path on the device's HTTP port.
    var iconPath: String?

    init(entries: [[UInt8]]) {
        var seen = Set<String>()
        for entry in entries {
            let equals = entry.firstIndex(of: UInt8(ascii: "=")) ?? entry.count
            let key = String(decoding: entry[..<equals], as: UTF8.self).lowercased()
            guard !key.isEmpty, seen.insert(key).inserted else { continue }
            let value = equals < entry.count ? String(decoding: entry[(equals + 1)...], as: UTF8.self) : ""
            switch key {
            case "id": id = value
            case "fn": friendlyName = value
            case "md": model = value
            case "ca": capabilities = UInt64(value)
            case "st": busy = value == "1"
            case "rs": statusText = value
            case "ve": version = value
            case "ic": iconPath = value
            default: break
            }
        }
    }

    /// A usable device id: 32 hex digits, or a UUID with hyphens (as certificates carry it).
    var validID: String? {
        guard let id, !id.isEmpty else { return nil }
        let hex = id.replacingOccurrences(of: Character("-"), with: "")
        guard hex.utf8.count == 32, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) else {
            return nil
        }
        return id
    }
}

extension String {
    /// Foundation-free replace for the few places plugins need it.
    func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
