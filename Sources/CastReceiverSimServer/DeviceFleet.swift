import CastReceiverSim

/// Lays out N simulated devices on loopback, each with its own identity.
///
/// `.addresses`: device i listens on base + i (127.0.0.1, 127.0.0.2, …; host parts 0 and 255 are
/// skipped), each on the device ports 8009/8008/8443 — what real devices look like.
/// `.ports`: every device on the base address; device i uses castPort + 3i, +1 (HTTP), +2 (HTTPS).
/// Identities are stable across runs: uuid i is derived from i and the seed.
public enum DeviceFleet {
    public enum Layout: String, Sendable, CaseIterable {
        case addresses
        case ports
    }

    public static func make(count: Int, layout: Layout = .addresses, baseAddress: String = "127.0.0.1",
                            basePort: Int? = nil, namePrefix: String = "castline sim", model: String = "Chromecast",
                            seed: UInt64 = 0) throws(SimulatorError) -> [SimulatedDeviceConfiguration] {
        guard count >= 1 else { throw .configuration("--devices must be at least 1") }
        guard let base = IPv4(baseAddress) else { throw .configuration("\"\(baseAddress)\" is not an IPv4 address") }
        var devices: [SimulatedDeviceConfiguration] = []
        var address = base.value
        for i in 0..<count {
            let name = count == 1 ? namePrefix : "\(namePrefix) \(i + 1)"
            var device = SimulatedDeviceConfiguration(name: name, uuid: uuid(index: i, seed: seed), model: model)
            switch layout {
            case .addresses:
                if i > 0 {
                    address += 1
                    while address & 0xFF == 0 || address & 0xFF == 255 { address += 1 }
                }
                guard address >> 24 == base.value >> 24 else {
                    throw .configuration("\(count) devices do not fit in \(base.value >> 24).0.0.0/8 from \(baseAddress)")
                }
                device.address = IPv4(value: address).description
                if let basePort { device.castPort = basePort }
            case .ports:
                device.address = baseAddress
                let first = basePort ?? 20_000
                device.castPort = first + 3 * i
                device.httpPort = first + 3 * i + 1
                device.httpsPort = first + 3 * i + 2
                guard device.httpsPort <= 65535 else { throw .configuration("\(count) devices do not fit above port \(first)") }
            }
            devices.append(device)
        }
        return devices
    }

    /// 32 lowercase hex digits derived from the index (SplitMix64).
    public static func uuid(index: Int, seed: UInt64) -> String {
        var generator = IdentifierGenerator(seed: seed &+ 0xCA57_11FE_0000_0000 &+ UInt64(index))
        return IdentifierGenerator.hex(generator.next(), digits: 16) + IdentifierGenerator.hex(generator.next(), digits: 16)
    }
}

/// A dotted-quad IPv4 address.
struct IPv4: CustomStringConvertible {
    let value: UInt32

    init(value: UInt32) { self.value = value }

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        self.value = value
    }

    var description: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
}
