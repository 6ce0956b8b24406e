@testable import CastReceiverSim
import Testing

/// Session ids: RFC 4122 version-4 UUIDs in lowercase 8-4-4-4-12 form, the same for the same seed.
@Suite("IdentifierGenerator")
struct IdentifierGeneratorTests {
    @Test("uuid() is the two next() words as hex with the version and variant bits, dashed 8-4-4-4-12", arguments: [0, 1, 42, 0xDEAD_BEEF, UInt64.max])
    func uuidMatchesItsWords(seed: UInt64) {
        var generator = IdentifierGenerator(seed: seed)
        var words = IdentifierGenerator(seed: seed)
        for _ in 0..<50 {
            let uuid = generator.uuid()
            let high = (words.next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000
            let low = (words.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
            let hex = Array(IdentifierGenerator.hex(high, digits: 16) + IdentifierGenerator.hex(low, digits: 16))
            let expected = [hex[0..<8], hex[8..<12], hex[12..<16], hex[16..<20], hex[20..<32]].map { String($0) }.joined(separator: "-")
            #expect(uuid == expected)
            #expect(uuid.utf8.count == 36 && Array(uuid)[14] == "4" && "89ab".contains(Array(uuid)[19]))
        }
    }
}

/// Session ids are unique across the devices of one simulator (issue 47: Court A's second session
/// id equalled Court C's first).
@Suite("Session ids across devices")
struct SessionIDUniquenessTests {
    /// Every session id `devices` devices make in `launches` LAUNCH/STOP rounds each, device `i`
    /// seeded with `seed(i)`.
    static func sessionIDs(devices: Int, launches: Int, seed: (Int) -> UInt64) -> [String] {
        var ids: [String] = []
        for index in 0..<devices {
            var sim = SimHarness(seed: seed(index))
            sim.connect()
            for _ in 0..<launches {
                sim.receiver("LAUNCH", ["appId": "CC1AD845"])
                guard let session = sim.snapshot.app?.sessionID else {
                    Issue.record("device \(index): LAUNCH started no app")
                    return ids
                }
                ids.append(session)
                sim.receiver("STOP", ["sessionId": .string(session)])
            }
        }
        return ids
    }

    @Test func theDevicesOfASimulatorNeverShareASessionID() {
        let ids = Self.sessionIDs(devices: 24, launches: 12) { IdentifierGenerator.deviceSeed(index: $0) }
        #expect(ids.count == 24 * 12)
        #expect(Set(ids).count == ids.count, "repeated: \(Dictionary(grouping: ids) { $0 }.filter { $1.count > 1 }.keys.sorted())")
    }

    /// The procedure above detects the fault: the old seeds, one SplitMix step apart, repeat ids.
    @Test func theOldSeedsRepeatedSessionIDs() {
        let ids = Self.sessionIDs(devices: 3, launches: 2) { (UInt64($0) &+ 1) &* IdentifierGenerator.step }
        #expect(ids[1] == ids[4], "device 0's second session id was device 2's first")
    }

    @Test func aDeviceSeedIsTheSameOnEveryRun() {
        #expect(Self.sessionIDs(devices: 2, launches: 3) { IdentifierGenerator.deviceSeed(index: $0) }
                == Self.sessionIDs(devices: 2, launches: 3) { IdentifierGenerator.deviceSeed(index: $0) })
    }
}
