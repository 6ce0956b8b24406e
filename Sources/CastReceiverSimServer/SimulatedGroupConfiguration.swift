import CastReceiverSim

/// A speaker group of simulated devices: its own Cast endpoint on the leader's address.
///
/// The endpoint listens on the leader's address at `castPort + 3 × k` (CASTV2), `+ 1` (eureka_info
/// over HTTP) and `+ 2` (HTTPS), where `k` is the leader's position in `members`; so a leader move
/// changes the address, the port, or both, as real groups do. Value type; `Sendable`.
public struct SimulatedGroupConfiguration: Sendable, Equatable {
    public var name: String
    /// 32 lowercase hex digits.
    public var uuid: String
    /// Device indexes, in order.
    public var members: [Int]
    /// The leading member's device index (one of `members`).
    public var leader: Int
    /// Two members that form a stereo pair (left, right), or nil.
    public var stereoPair: [Int]?
    /// Base port of the endpoint (see the type's comment); real groups use ports like 32219.
    public var castPort: Int

    public static let defaultBasePort = 32_219
    /// Ports between two groups' bases: room for 10 leader positions of 3 ports each.
    public static let portsPerGroup = 30

    public init(name: String, uuid: String, members: [Int], leader: Int? = nil, stereoPair: [Int]? = nil,
                castPort: Int) {
        self.name = name
        self.uuid = uuid
        self.members = members
        self.leader = leader ?? members.first ?? 0
        self.stereoPair = stereoPair
        self.castPort = castPort
    }

    /// The endpoint's CASTV2 port while `leader` leads.
    public func castPort(leader: Int) -> Int {
        castPort + 3 * (members.firstIndex(of: leader) ?? 0)
    }

    /// A stable uuid for a group without one: FNV-1a of the name, twice, as 32 hex digits.
    public static func derivedUUID(name: String, index: Int) -> String {
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in "group \(index) \(name)".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return hash
        }
        let high = String(fnv(0xCBF2_9CE4_8422_2325), radix: 16)
        let low = String(fnv(0x84222325_CBF29CE4), radix: 16)
        func pad(_ text: String) -> String { String(repeating: "0", count: 16 - text.count) + text }
        return pad(high) + pad(low)
    }

    /// Checks the group against the device list: members exist, leader and pair are members,
    /// every endpoint port is free.
    static func validate(_ groups: [SimulatedGroupConfiguration], devices: [SimulatedDeviceConfiguration])
        throws(SimulatorError) {
        var used: Set<String> = []
        for device in devices {
            for port in [device.castPort, device.httpPort, device.httpsPort] { used.insert("\(device.address):\(port)") }
        }
        var uuids = Set(devices.map(\.uuid))
        for group in groups {
            let label = "group \"\(group.name)\""
            guard group.uuid.utf8.count == 32, group.uuid.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                throw .configuration("\(label): uuid \"\(group.uuid)\" must be 32 lowercase hex digits")
            }
            guard uuids.insert(group.uuid).inserted else { throw .configuration("\(label): uuid \(group.uuid) is used twice") }
            guard !group.members.isEmpty, group.members.count <= 10 else {
                throw .configuration("\(label): needs 1 to 10 members (device indexes)")
            }
            guard Set(group.members).count == group.members.count else { throw .configuration("\(label): a member is listed twice") }
            for member in group.members where !devices.indices.contains(member) {
                throw .configuration("\(label): member \(member) is no device (there are \(devices.count): 0…\(devices.count - 1))")
            }
            guard group.members.contains(group.leader) else { throw .configuration("\(label): leader \(group.leader) is no member") }
            if let pair = group.stereoPair {
                guard pair.count == 2, pair[0] != pair[1], pair.allSatisfy({ group.members.contains($0) }) else {
                    throw .configuration("\(label): stereoPair must be two different members")
                }
            }
            guard group.castPort >= 1, group.castPort + 3 * group.members.count <= 65535 else {
                throw .configuration("\(label): castPort \(group.castPort) out of range")
            }
            for member in group.members {
                let base = group.castPort(leader: member)
                for port in base...(base + 2) {
                    let key = "\(devices[member].address):\(port)"
                    guard used.insert(key).inserted else {
                        throw .configuration("\(label): its endpoint for leader \(member) would use \(key), which is taken")
                    }
                }
            }
        }
    }
}
