/// The DNS-SD records of one nearby publication in wire form (RFC 1035 names, RFC 2782 SRV,
/// RFC 6763 TXT), for avahi's raw-record API: avahi's service API would give them its default
/// 75-minute TTL, and a publisher that vanishes without a goodbye (power loss) would then linger
/// in every cache for that long. Ours carry ``recordTTL``.
package struct NearbyDNSRecords: Equatable, Sendable {
    /// The DNS-SD service type nearby messages are published under.
    package static let serviceType = "_castline-nearby._udp"
    package static let domain = "local"
    /// TTL of every record (seconds). A subscriber's mDNS cache re-queries at 80-95 % of it and
    /// drops the records when nobody answers: the bound on "lost" after a publisher vanishes
    /// without withdrawing is this TTL plus at most ``lossSlackSeconds``.
    package static let recordTTL: UInt32 = 10
    package static let lossSlackSeconds = 3
    /// RFC 6763 §7: port 9 ("discard") for a service that has no port of its own.
    package static let port: UInt16 = 9

    package var instanceLabel: String
    package var ptrRdata: [UInt8]
    package var srvRdata: [UInt8]
    package var txtRdata: [UInt8]
    /// `_services._dns-sd._udp.local` → the service type (RFC 6763 §9 enumeration).
    package var enumerationRdata: [UInt8]

    /// Records for `instanceLabel` (≤ 63 bytes) on `hostFQDN` (e.g. `castdev.local`).
    package init(instanceLabel: String, hostFQDN: String, txt: [[UInt8]]) {
        self.instanceLabel = instanceLabel
        let typeLabels = Self.serviceType.split(separator: ".").map(String.init) + [Self.domain]
        ptrRdata = Self.name([instanceLabel] + typeLabels)
        let target = Self.name(hostFQDN.split(separator: ".").map(String.init))
        srvRdata = [0, 0, 0, 0, UInt8(Self.port >> 8), UInt8(Self.port & 0xFF)] + target
        txtRdata = txt.isEmpty ? [0] : txt.flatMap { [UInt8($0.count)] + $0 }
        enumerationRdata = Self.name(typeLabels)
    }

    /// A name in uncompressed wire form: each label with its length byte, then the root (0).
    /// Labels longer than 63 bytes are cut at 63 (instance labels are built to fit).
    package static func name(_ labels: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for label in labels where !label.isEmpty {
            let raw = Array(label.utf8.prefix(63))
            bytes.append(UInt8(raw.count))
            bytes += raw
        }
        bytes.append(0)
        return bytes
    }

    /// An instance label: `<host> nearby <id>`, the host cut so the label stays within 63 bytes
    /// on a UTF-8 boundary.
    package static func instanceLabel(host: String, id: UInt64) -> String {
        let suffix = " nearby " + String(id, radix: 16)
        var hostPart = ""
        for character in host {
            if hostPart.utf8.count + String(character).utf8.count + suffix.utf8.count > 63 { break }
            hostPart.append(character)
        }
        return hostPart + suffix
    }
}
