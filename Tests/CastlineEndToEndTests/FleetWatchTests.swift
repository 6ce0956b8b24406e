import CastCore
@testable import castline
import Testing

/// `castline fleet`'s own MQTT pieces: the packets it writes, the reader that splits a broker's
/// byte stream (whole, split anywhere, malformed), and the fleet view built from the messages.
@Suite struct FleetWatchTests {
    @Test func packetsAreMQTT311() {
        #expect(MQTTPackets.connect(clientID: "c", keepalive: 30, username: nil, password: nil)
            == [0x10, 13, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0x02, 0, 30, 0, 1, 0x63])
        #expect(MQTTPackets.connect(clientID: "c", keepalive: 30, username: "u", password: "p")[9] == 0xC2)
        #expect(MQTTPackets.subscribe(id: 1, filters: ["a/#"]) == [0x82, 8, 0, 1, 0, 3, 0x61, 0x2F, 0x23, 1])
        // Remaining length over 127 takes two bytes.
        #expect(Array(MQTTPackets.packet(0x30, [UInt8](repeating: 0, count: 200)).prefix(3)) == [0x30, 0xC8, 0x01])
    }

    @Test func theReaderSplitsAStreamCutAnywhere() throws {
        let publish: [UInt8] = [0x33, 9, 0, 3, 0x61, 0x2F, 0x62, 0, 7, 0x68, 0x69] // QoS 1, retained, "a/b", id 7, "hi"
        let stream: [UInt8] = [0x20, 2, 0, 0] + [0x90, 3, 0, 1, 1] + publish
        for cut in 0...stream.count {
            var reader = MQTTPacketReader()
            var packets: [MQTTIncoming] = []
            reader.append(stream[..<cut])
            while let p = try reader.next() { packets.append(p) }
            reader.append(stream[cut...])
            while let p = try reader.next() { packets.append(p) }
            #expect(packets == [.connack(returnCode: 0), .suback, .publish(topic: "a/b", payload: Array("hi".utf8), retained: true, packetID: 7)])
        }
        var bad = MQTTPacketReader()
        bad.append([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        #expect(throws: MQTTPacketReader.Malformed.self) { try bad.next() }
        var huge = MQTTPacketReader()
        huge.append([0x30, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: MQTTPacketReader.Malformed.self) { try huge.next() }
    }

    @Test func theViewListsEveryAgentOnlineOrNot() throws {
        var view = FleetView(base: "castline")
        func apply(_ topic: String, _ payload: [UInt8]) -> Bool { view.apply(topic: topic, payload: payload) }
        #expect(apply("castline/a/status", Array("online".utf8)))
        #expect(apply("castline/a/device/tv/state", Array(#"{"id":"tv","device":"TV","state":"PLAYING","title":"T"}"#.utf8)))
        #expect(apply("castline/b/device/x/state", Array(#"{"id":"x","device":"X","state":"IDLE"}"#.utf8)))
        #expect(apply("castline/b/status", Array("offline".utf8)))
        #expect(!apply("castline/b/status", Array("offline".utf8)))
        #expect(!apply("other/a/status", Array("online".utf8)))
        #expect(!apply("castline/a/device/tv/state", Array("{bad".utf8)))
        #expect(view.json == ["agents": [
            ["agent": "a", "status": "online", "online": true, "devices": [["id": "tv", "device": "TV", "state": "PLAYING", "title": "T", "current": true]]],
            ["agent": "b", "status": "offline", "online": false, "devices": [["id": "x", "device": "X", "state": "IDLE", "current": false]]],
        ]])
        #expect(view.lines == ["a  online  1 device", "  TV  PLAYING  T", "b  offline  1 device", "  X  IDLE  (last known)"])
        // A cleared retained state removes the device.
        #expect(apply("castline/a/device/tv/state", []))
        #expect(view.agents["a"]?.devices.isEmpty == true)
    }
}
