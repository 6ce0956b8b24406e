import CastCore
@testable import CastReceiverSimServer
import Testing

/// `--replay` identity: the recorded TXT and eureka_info replace the simulator's own.
@Suite("Replay identity")
struct ReplayIdentityTests {
    static let device = SimulatedDeviceConfiguration(name: "Den TV", uuid: "0123456789abcdef0123456789abcdef", model: "Chromecast")

    @Test("recorded TXT values replace the simulator's for the same keys, except the live st and rs")
    func recordedTXT() {
        var advertisement = MDNSAdvertisement(configuration: Self.device, busy: true, statusText: "Casting", appIDs: [])
        let own = advertisement.txt
        advertisement.recordedTXT = ["md": "Chromecast Ultra", "ca": "201221", "st": "0", "rs": "old", "bs": "FA8FCA000001"]
        let txt = advertisement.txt
        #expect(txt.count == own.count)
        #expect(txt.contains("md=Chromecast Ultra") && txt.contains("ca=201221") && txt.contains("bs=FA8FCA000001"))
        #expect(txt.contains("st=1") && txt.contains("rs=Casting"))
        #expect(txt.contains("id=0123456789abcdef0123456789abcdef"))
    }

    @Test("a recorded eureka_info document is served as recorded, params or not")
    func recordedEureka() {
        var info = EurekaInfo(name: "Den TV", uuid: Self.device.uuid, model: "Chromecast", ipAddress: "127.0.0.1",
                              displaySupported: true, uptime: 1)
        let recorded: JSONValue = ["name": "Real Den TV", "uptime": 12345.5, "build_version": "1.56.500000"]
        info.recorded = recorded
        #expect(info.json == recorded)
        #expect(info.json(params: "name")["name"]?.string == "Real Den TV")
        #expect(info.json(params: "name")["uptime"] == nil)
    }
}
