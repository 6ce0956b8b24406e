import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastSender
import CastTestSupport
import Testing

/// A plugin's discovery feature as a provider of the DiscoveryManager: its valid report becomes
/// a device, its invalid JSON is refused with one error line and the manager goes on.
@Suite struct PluginDiscoveryTests {
    @Test func validReportsBecomeDevicesAndInvalidJSONIsRefused() async throws {
        let rig = try PluginHostRig(paths: [BuiltProducts.library("TestPluginGood")]) {
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        rig.host.loadAll()
        let providers = rig.host.discoveryProviders()
        #expect(providers.map(\.name) == ["test-discovery"])
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(), logSystem: rig.logSystem)
        for p in providers { await manager.add(p) }
        await manager.start()
        // Bounded: 10 s (the plugin's thread reports at once; a loaded machine may not).
        let devices = await pollValue(timeout: 10) { () async -> [CastDevice]? in
            let devices = await manager.devices
            return devices.isEmpty ? nil : devices
        } ?? []
        let device = try #require(devices.first)
        #expect(devices.count == 1)
        #expect(device.id == "0123456789abcdef0123456789abcdef")
        #expect(device.friendlyName == "Fixture TV")
        #expect(device.host == "127.0.0.1" && device.port == 8009)
        #expect(device.modelName == "Chromecast")
        #expect(device.provider == "test-discovery")
        await manager.stop()
        let errors = rig.hostErrors.map(\.message)
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains("device_found JSON from plugin test-good is not valid JSON") == true)
    }

    @Test func deviceReportsAreChecked() {
        let missingHost: JSONValue = ["id": "abc", "name": "TV"]
        let badPort: JSONValue = ["id": "abc", "host": "10.0.0.2", "port": 70000]
        let good: JSONValue = ["id": "abc", "host": "fe80::1%eth0", "name": "TV", "capabilities": 4101,
                               "addresses": ["fe80::1%eth0", "10.0.0.2"], "app_ids": ["CC1AD845"]]
        #expect(PluginDiscoveryProviderProbe.check(missingHost) == "device abc: no \"host\" string")
        #expect(PluginDiscoveryProviderProbe.check(badPort) == "device abc: port 70000 is out of range")
        #expect(PluginDiscoveryProviderProbe.check(["name": "TV"]) == "the device report has no \"id\" string")
        let device = PluginDiscoveryProviderProbe.device(good)
        #expect(device?.capabilities?.contains(.videoOut) == true)
        #expect(device?.addresses == ["fe80::1%eth0", "10.0.0.2"])
        #expect(device?.supportedAppIDs == ["CC1AD845"])
    }
}
