import CastTestSupport
import CastCore
import CastLogging
import CastProtocol
import CastReceiverSimServer
import CastTransport
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `EurekaInfoClient` against the simulator's eureka_info (HTTPS and HTTP) over loopback, a port
/// that refuses, and one that never answers.
@Suite("EurekaInfoClient", .timeLimit(.minutes(1)))
struct EurekaInfoClientTests {
    /// Nothing listens there (the discard port): connecting is refused at once.
    static let refusingPort = 9

    /// Runs `body` with a simulated device and an event loop group, both stopped afterwards.
    func withDevice(_ body: (SimulatedDeviceConfiguration, EventLoopGroup) async throws -> Void) async throws {
        let simulator = try await CastConnectionTests.simulator()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await withTeardown((simulator, group), { rig in
            await rig.0.stop()
            try await rig.1.shutdownGracefully()
        }) { rig in try await body(rig.0.devices[0].configuration, rig.1) }
    }

    @Test func httpsAnswerNamesTheDeviceWithItsUUID() async throws {
        try await withDevice { device, group in
            let info = await EurekaInfoClient.describe(host: device.address, httpsPort: device.httpsPort, httpPort: Self.refusingPort,
                                                       timeout: 10, group: group, logSystem: LogSystem())
            #expect(info == EurekaDeviceInfo(name: device.name, id: device.uuid, model: device.model, displaySupported: device.isVideoDevice))
        }
    }

    @Test func plainHTTPIsAskedWhenTheHTTPSPortRefuses() async throws {
        try await withDevice { device, group in
            // A bound for a loaded machine (the suite runs in parallel on two cores): the claim is
            // the fallback to plain HTTP, not its speed.
            let info = await EurekaInfoClient.describe(host: device.address, httpsPort: Self.refusingPort, httpPort: device.httpPort,
                                                       timeout: 10, group: group, logSystem: LogSystem())
            #expect(info?.name == device.name && info?.id == device.uuid)
            let nothing = await EurekaInfoClient.describe(host: device.address, httpsPort: Self.refusingPort, httpPort: Self.refusingPort,
                                                          group: group, logSystem: LogSystem())
            #expect(nothing == nil)
        }
    }

    @Test func aSilentPortCostsTheTimeoutAndNoSecondRequest() async throws {
        try await withDevice { device, group in
            let silent = try await SilentListener.start(group: group)
            let started = MonotonicClock.seconds()
            // The HTTP port would answer: a timeout on HTTPS does not fall back to it.
            let info = await EurekaInfoClient.describe(host: "127.0.0.1", httpsPort: silent.port, httpPort: device.httpPort, timeout: 0.3,
                                                       group: group, logSystem: LogSystem())
            let elapsed = MonotonicClock.seconds() - started
            #expect(info == nil)
            #expect(elapsed >= 0.25 && elapsed < 2, "\(elapsed) s")
            #expect(silent.accepted == 1)
            #expect(await silent.wait { $0.closedByPeer == 1 }, "the connection given up is closed")
            await silent.stop()
        }
    }

    /// Real devices' eureka_info answers (`Tests/Fixtures/real/eureka-info-*.json`): the name and
    /// the id (`ssdp_udn` without dashes) come out of each; these plain-HTTP answers carry no
    /// `device_info`, so no model.
    @Test("castline reads every real eureka_info answer", arguments: ["eureka-info-chromecast-2022.json", "eureka-info-google-home-2018.json"])
    func realAnswers(name: String) throws {
        let fixture = try RealFixtures.json(name)
        let document = try #require(fixture["document"])
        let udn = try #require(document["ssdp_udn"]?.string)
        let info = try #require(EurekaDeviceInfo.parse(body: document.serializedBytes(), peerCommonName: nil))
        #expect(info == EurekaDeviceInfo(name: document["name"]?.string, id: udn.lowercased().filter { $0 != "-" }, model: nil))
        #expect(info.id?.count == 32)
    }

    @Test func theAnswerGivesNameIdAndModel() {
        let full = Array(#"{"name":"Lobby TV","ssdp_udn":"0123ABCD-4567-89ab-cdef-0123456789AB","device_info":{"model_name":"Chromecast Ultra"}}"#.utf8)
        #expect(EurekaDeviceInfo.parse(body: full, peerCommonName: "cn")
                == EurekaDeviceInfo(name: "Lobby TV", id: "0123abcd456789abcdef0123456789ab", model: "Chromecast Ultra"))
        let noUDN = Array(#"{"device_info":{"name":"Den","ssdp_udn":"not-a-uuid"}}"#.utf8)
        #expect(EurekaDeviceInfo.parse(body: noUDN, peerCommonName: "fedcba9876543210fedcba9876543210")
                == EurekaDeviceInfo(name: "Den", id: "fedcba9876543210fedcba9876543210"))
        #expect(EurekaDeviceInfo.parse(body: noUDN, peerCommonName: nil) == EurekaDeviceInfo(name: "Den"))
        #expect(EurekaDeviceInfo.parse(body: Array(#"{"error":"not found"}"#.utf8), peerCommonName: nil) == nil)
        #expect(EurekaDeviceInfo.parse(body: Array("<html>".utf8), peerCommonName: "cn") == nil)
        #expect(EurekaDeviceInfo.parse(body: Array(#"["Lobby"]"#.utf8), peerCommonName: nil) == nil)
    }
}
