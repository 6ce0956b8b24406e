import CastCore
import CastLogging
import CCastPluginABI
import CastPluginHost
import CastTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ABI 1.1's bridge kind on a real `.so` (`Tests/PluginFixtures/Bridge`, C): it loads beside 1.0
/// plugins, its requests reach the services and come back through `on_reply`, its subscribed
/// events through `on_event`, and a 1.0-sized host table says it has no bridge services.
@Suite struct PluginBridgeTests {
    static let bridge = BuiltProducts.library("TestPluginBridge")

    /// Services that answer every request with its own JSON and hand out one event feed the test feeds.
    final class FakeServices: Sendable {
        let requests = Mutex<[JSONValue]>([])
        let kinds = Mutex<[[String]?]>([])
        let feed = AsyncStream.makeStream(of: JSONValue.self)

        var services: BridgeServices {
            BridgeServices(
                request: { [self] request in
                    requests.withLock { $0.append(request) }
                    return (201, ["echo": request])
                },
                subscribe: { [self] kinds in
                    self.kinds.withLock { $0.append(kinds) }
                    return .success(BridgeEventFeed(events: feed.stream, cancel: { [feed] in feed.continuation.finish() }))
                })
        }
    }

    @Test func aBridgeLoadsWithABI1Point1AndCarriesRequestsAndEvents() async throws {
        let rig = try PluginHostRig(paths: [Self.bridge, PluginLoaderTests.good], PluginLoaderTests.allowAll)
        rig.host.loadAll()
        #expect(rig.hostErrors.isEmpty, "\(rig.hostErrors.map(\.message))")
        // 1.0-era plugins load beside it (the good fixture), and the bridge says the header's
        // minor (1.1, when bridges came, or later).
        #expect(rig.host.plugins.map(\.id) == ["test-bridge", "test-good"])
        #expect(rig.host.plugins.first.map { Int($0.abiMinor) } == Int(CASTLINE_PLUGIN_ABI_MINOR))
        #expect(rig.host.features(of: .bridge).map(\.id) == ["test-bridge"])

        let fake = FakeServices()
        let bridges = await rig.host.startBridges(fake.services)
        #expect(bridges.count == 1)
        #expect(fake.kinds.withLock { $0 } == [["device"]])
        let reply = await pollValue(timeout: 10) { rig.records(class: "TestBridge").first { $0.message == "reply" } }
        let record = try #require(reply)
        #expect(record.fields["id"] == 7)
        #expect(record.fields["status"] == 201)
        let json = try JSONValue.parse(try #require(record.fields["json"]?.description))
        #expect(json == ["echo": ["method": "GET", "path": "/v1/status"]])
        #expect(fake.requests.withLock { $0 } == [["method": "GET", "path": "/v1/status"]])

        fake.feed.continuation.yield(["kind": "device", "type": "found", "device": "tv-1"])
        let event = await pollValue(timeout: 10) { rig.records(class: "TestBridge").first { $0.message == "event" } }
        let eventJSON = try JSONValue.parse(try #require(event?.fields["json"]?.description))
        #expect(eventJSON == ["kind": "device", "type": "found", "device": "tv-1"])

        for b in bridges { await b.stop() }
        #expect(rig.records(class: "TestBridge").map(\.message).last == "stopped")
        rig.host.shutdown()
    }

    @Test func aRequestThatIsNotJSONIsRefusedWithAnErrorAndNoReply() async throws {
        let rig = try PluginHostRig(paths: [Self.bridge]) {
            $0.pluginConfigs = ["test-bridge": #"{"request":{"method": oops}"#]
        }
        rig.host.loadAll()
        let fake = FakeServices()
        let bridges = await rig.host.startBridges(fake.services)
        let requested = try #require(await pollValue(timeout: 10) { rig.records(class: "TestBridge").first { $0.message == "requested" } })
        #expect(requested.fields["status"] == 2) // CASTLINE_ERR_INVALID_JSON
        #expect(rig.hostErrors.contains { $0.message.contains("control request from plugin test-bridge is not valid JSON") })
        #expect(fake.requests.withLock { $0 }.isEmpty)
        for b in bridges { await b.stop() }
        rig.host.shutdown()
    }

    @Test func aOnePointZeroSizedHostTableHasNoBridgeServices() throws {
        let handle = try #require(dlopen(Self.bridge, RTLD_NOW | RTLD_LOCAL))
        let symbol = try #require(dlsym(handle, "test_bridge_host_has_services"))
        let hasServices = unsafeBitCast(symbol, to: (@convention(c) (UInt32) -> Int32).self)
        #expect(hasServices(80) == 0)   // CASTLINE_HOST_SERVICES_SIZE_1_0: a 1.0 host
        #expect(hasServices(88) == 0)   // part of 1.1 only
        #expect(hasServices(96) == 1)   // CASTLINE_HOST_SERVICES_SIZE_1_1
    }
}
