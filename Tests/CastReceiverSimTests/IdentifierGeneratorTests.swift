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
