import CastNearby
import Testing

@Suite struct NearbyTXTRecordTests {
    @Test func roundTripsEverySizeUpToTheLimitIncludingBinaryContent() throws {
        for size in [0, 1, 249, 250, 251, 500, 1023, 1024] {
            let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let message = NearbyMessage(namespace: "lobby.kiosk", type: "screen-state", content: content)
            let strings = NearbyTXTRecord.encode(message)
            #expect(strings.allSatisfy { $0.count <= 255 })
            #expect(try NearbyTXTRecord.decode(strings) == message)
            #expect(try NearbyTXTRecord.decode(strings.reversed()) == message, "avahi hands TXT strings back in any order")
        }
    }

    @Test func theLargestMessageFitsOneMDNSPacketOverIPv6() {
        let message = NearbyMessage(namespace: String(repeating: "n", count: 32), type: String(repeating: "t", count: 32),
                                    content: [UInt8](repeating: 0xFF, count: NearbyMessage.maxContentBytes))
        let txt = NearbyTXTRecord.encode(message)
        let records = NearbyDNSRecords(instanceLabel: String(repeating: "h", count: 63), hostFQDN: "host.local", txt: txt)
        // DNS header 12 + owner name (63-byte label + service type + local) + RR header 10 + TXT data.
        let owner = NearbyDNSRecords.name([String(repeating: "h", count: 63), "_castline-nearby", "_udp", "local"]).count
        let total = 12 + owner + 10 + records.txtRdata.count
        #expect(records.txtRdata.count == NearbyTXTRecord.wireSize(txt))
        #expect(total <= 1500 - 40 - 8 - 100, "room left for the PTR record: \(total)")
    }

    @Test func refusesRecordsThatAreNotWholeMessages() {
        let message = NearbyMessage(type: "t", content: Array(repeating: 0x41, count: 600))
        let good = NearbyTXTRecord.encode(message)
        let cases: [(String, [[UInt8]])] = [
            ("no version", Array(good.dropFirst())),
            ("a chunk missing", good.filter { !$0.starts(with: Array("d1=".utf8)) }),
            ("a chunk repeated", good + [Array("d0=x".utf8)]),
            ("length mismatch", good.map { $0.starts(with: Array("n=".utf8)) ? Array("n=599".utf8) : $0 }),
            ("length over the limit", good.map { $0.starts(with: Array("n=".utf8)) ? Array("n=5000".utf8) : $0 }),
            ("future version", good.map { $0 == Array("cn=1".utf8) ? Array("cn=2".utf8) : $0 }),
            ("no key", good + [Array("novalue".utf8)]),
            ("bad namespace", good.map { $0.starts(with: Array("ns=".utf8)) ? Array("ns=a b".utf8) : $0 }),
            ("key repeated", good + [Array("ty=u".utf8)]),
        ]
        for (what, strings) in cases {
            #expect(throws: NearbyTXTRecord.DecodingError.self, "\(what)") { try NearbyTXTRecord.decode(strings) }
        }
    }

    @Test func validationRefusesOversizeContentAndBadNames() {
        #expect(throws: NearbyError.contentTooLarge(bytes: 1025, limit: 1024)) {
            try NearbyMessage(content: [UInt8](repeating: 0, count: 1025)).validate()
        }
        #expect(throws: NearbyError.self) { try NearbyMessage(namespace: "", content: []).validate() }
        #expect(throws: NearbyError.self) { try NearbyMessage(namespace: "a*b", content: []).validate() }
        #expect(throws: NearbyError.self) { try NearbyMessage(type: "x*", content: []).validate() }
        #expect(throws: NearbyError.self) { try NearbyMessage(type: String(repeating: "t", count: 33), content: []).validate() }
        #expect(throws: Never.self) { try NearbyMessage(type: "", content: []).validate() }
        #expect(NearbyError.contentTooLarge(bytes: 1025, limit: 1024).description.contains("one mDNS packet"))
    }

    @Test func dnsRecordsAreWellFormedWireData() {
        let records = NearbyDNSRecords(instanceLabel: "kiosk nearby 1f", hostFQDN: "kiosk.local", txt: [Array("cn=1".utf8)])
        #expect(records.ptrRdata == [15] + Array("kiosk nearby 1f".utf8) + [16] + Array("_castline-nearby".utf8) + [4] + Array("_udp".utf8)
                + [5] + Array("local".utf8) + [0])
        #expect(records.srvRdata == [0, 0, 0, 0, 0, 9, 5] + Array("kiosk".utf8) + [5] + Array("local".utf8) + [0])
        #expect(records.txtRdata == [4] + Array("cn=1".utf8))
        #expect(NearbyDNSRecords(instanceLabel: "x", hostFQDN: "h.local", txt: []).txtRdata == [0], "an empty TXT record is one empty string")
    }

    @Test func instanceLabelsStayWithin63BytesOnACharacterBoundary() {
        let label = NearbyDNSRecords.instanceLabel(host: String(repeating: "é", count: 60), id: UInt64.max)
        #expect(label.utf8.count <= 63)
        #expect(label.hasSuffix(" nearby ffffffffffffffff"))
        #expect(NearbyDNSRecords.instanceLabel(host: "kiosk", id: 0x2a) == "kiosk nearby 2a")
    }
}
