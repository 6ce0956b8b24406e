import CastCore
import CastLogging
@testable import CastSender
import CastTestSupport
import Synchronization
import Testing

/// A provider the test drives by hand (unit tests of DiscoveryManager alone).
final class ManualProvider: DiscoveryProvider {
    let name: String
    private let sink = Mutex<DiscoveryProviderSink?>(nil)
    private let failure: String?

    init(name: String, failure: String? = nil) {
        self.name = name
        self.failure = failure
    }

    func start(_ sink: DiscoveryProviderSink) async throws(DiscoveryProviderError) {
        if let failure { throw DiscoveryProviderError(failure) }
        self.sink.withLock { $0 = sink }
    }

    func stop() async { sink.withLock { $0 = nil } }

    func found(_ device: CastDevice) { sink.withLock { $0 }?.found(device) }
    func lost(_ id: String) { sink.withLock { $0 }?.lost(deviceID: id) }
}

@Suite("DiscoveryManager", .timeLimit(.minutes(1)))
struct DiscoveryManagerTests {
    static func device(_ id: String, _ name: String, apps: Set<String> = []) -> CastDevice {
        CastDevice(id: id, friendlyName: name, host: "127.0.0.1", port: 8009, supportedAppIDs: apps, provider: "manual")
    }

    /// Waits (bounded) until the manager lists `count` devices.
    static func waitForCount(_ manager: DiscoveryManager, _ count: Int) async -> [CastDevice] {
        let listed = await pollValue(timeout: 10) { () async -> [CastDevice]? in
            let devices = await manager.devices
            return devices.count == count ? devices : nil
        }
        if let listed { return listed }
        return await manager.devices
    }

    @Test("sorted by friendly name, deduplicated by id across providers, events for insert, update and remove")
    func sortDedupeEvents() async {
        let manager = DiscoveryManager(criteria: .any, logSystem: LogSystem())
        let one = ManualProvider(name: "one"), two = ManualProvider(name: "two")
        await manager.add(one)
        await manager.add(two)
        let events = manager.events()
        await manager.start()
        one.found(Self.device("b", "bedroom"))
        one.found(Self.device("a", "Attic"))
        two.found(Self.device("c", "cellar"))
        two.found(Self.device("a", "Attic"))
        let listed = await Self.waitForCount(manager, 3)
        #expect(listed.map(\.friendlyName) == ["Attic", "bedroom", "cellar"])
        one.found(Self.device("b", "Aardvark room"))
        one.lost("a")
        two.lost("c")
        var names = await Self.waitForCount(manager, 2).map(\.friendlyName)
        #expect(names == ["Aardvark room", "Attic"], "a is still reported by provider two")
        two.lost("a")
        names = await Self.waitForCount(manager, 1).map(\.friendlyName)
        #expect(names == ["Aardvark room"])
        await manager.stop()
        var seen: [String] = []
        for await event in events {
            switch event {
            case .started: seen.append("started")
            case .inserted(let device, let index): seen.append("insert \(device.id)@\(index)")
            case .updated(let device, let index): seen.append("update \(device.id)@\(index)")
            case .removed(let device): seen.append("remove \(device.id)")
            case .problem(let provider, let reason): seen.append("problem \(provider): \(reason ?? "recovered")")
            case .stopped: seen.append("stopped")
            }
            if case .stopped = event { break }
        }
        #expect(seen == ["started", "insert b@0", "insert a@0", "insert c@2", "update b@0", "remove c", "remove a", "remove b", "stopped"])
    }

    @Test("1,000 devices found at once reach a subscriber that has read nothing yet, every one (the daemon's start with a big static list)")
    func aBurstOfDevicesIsNotDropped() async {
        let manager = DiscoveryManager(criteria: .any, logSystem: LogSystem())
        let provider = ManualProvider(name: "static")
        await manager.add(provider)
        let events = manager.events()
        await manager.start()
        for i in 0..<1_000 { provider.found(Self.device("tv\(i)", "TV \(i)")) }
        #expect(await Self.waitForCount(manager, 1_000).count == 1_000)
        await manager.stop()
        var inserted = Set<String>()
        for await event in events {
            if case .inserted(let device, _) = event { inserted.insert(device.id) }
            if case .stopped = event { break }
        }
        #expect(inserted.count == 1_000, "the subscriber saw \(inserted.count) of 1,000 devices inserted")
    }

    @Test("criteria filter by app id, and the empty list explains itself")
    func explanation() async {
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(appIDs: ["CC1AD845"], keepUnknown: false), logSystem: LogSystem())
        var why = await manager.explanation
        #expect(why?.noProviders == true && why?.notStarted == true)
        #expect(why?.lines.first?.contains("no discovery provider") == true)

        let provider = ManualProvider(name: "manual")
        await manager.add(ManualProvider(name: "broken", failure: "avahi-daemon is not running"))
        await manager.add(provider)
        await manager.start()
        provider.found(Self.device("tv", "TV", apps: ["DEADBEEF"]))
        provider.found(Self.device("unknown", "Unknown"))
        _ = await pollUntil(timeout: 10) { await manager.filteredOutCount >= 2 }
        why = await manager.explanation
        #expect(why?.filteredOut == 2)
        #expect(why?.failedProviders.map(\.name) == ["broken"])
        let text = why?.description ?? ""
        #expect(text.contains("provider broken failed: avahi-daemon is not running"), "\(text)")
        #expect(text.contains("2 device(s) found but filtered out: they do not support app CC1AD845"), "\(text)")

        provider.found(Self.device("tv", "TV", apps: ["DEADBEEF", "CC1AD845"]))
        #expect(await Self.waitForCount(manager, 1).map(\.id) == ["tv"])
        #expect(await manager.explanation == nil)
        await manager.stop()
    }
}

@Suite("StaticHostProvider against the simulator", .timeLimit(.minutes(1)))
struct StaticHostProviderTests {
    @Test("the problem line names how many hosts fail and at most three reasons")
    func summary() {
        #expect(StaticHostProvider.summary([], of: 4) == nil)
        #expect(StaticHostProvider.summary(["a", "b"], of: 4) == "2 of 4 host(s) unreachable: a; b")
        #expect(StaticHostProvider.summary(["a", "b", "c", "d", "e"], of: 9) == "5 of 9 host(s) unreachable: a; b; c; and 2 more")
    }

    @Test("probes: id from the certificate, app support from GET_APP_AVAILABILITY; an unreachable host is a provider problem")
    func probe() async throws {
        try await withSenderRig { rig in
            let device = rig.simulator.devices[0].configuration
            let provider = StaticHostProvider(hosts: [.init(host: device.address, port: device.castPort, name: "Lobby TV"),
                                                      .init(host: "127.0.0.1", port: 1, name: "Nowhere")],
                                              retryInterval: 0.2, recheckInterval: 0.2, connectTimeout: 2, group: rig.group, logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: DiscoveryCriteria(appIDs: ["CC1AD845"]))
            await manager.add(provider)
            await manager.start()
            let found = await manager.waitForDevice(timeout: 10) { $0.id == device.uuid }
            #expect(found?.friendlyName == "Lobby TV")
            #expect(found?.supportedAppIDs == ["CC1AD845"])
            #expect(await manager.devices.count == 1)

            // Going down removes it; coming back lists it again.
            // Down long enough to read the explanation before it is back, even on a loaded machine.
            try await rig.control(["command": "reboot", "device": 0, "downFor": 3])
            #expect(await DiscoveryManagerTests.waitForCount(manager, 0).isEmpty)
            let why = await manager.explanation
            #expect(why?.failedProviders.first?.reason.contains("127.0.0.1:1") == true, "\(String(describing: why))")
            #expect(await manager.waitForDevice(timeout: 10) { $0.id == device.uuid } != nil)
            await manager.stop()

            // A device that cannot run the app is filtered out and counted.
            let picky = rig.discoveryManager(criteria: DiscoveryCriteria(appIDs: ["DEADBEEF"]))
            await picky.add(StaticHostProvider(hosts: [.init(host: device.address, port: device.castPort)], retryInterval: 0.2,
                                               group: rig.group, logSystem: rig.logSystem))
            await picky.start()
            _ = await pollUntil(timeout: 10) { await picky.filteredOutCount >= 1 }
            #expect(await picky.explanation?.filteredOut == 1)
            await picky.stop()
        }
    }

    @Test("the unreachable-host summary: none before a full interval, then one per interval with the probes since the last; an answer ends the outage")
    func reminderCadence() {
        let a = StaticHostProvider.Host(host: "10.0.0.1"), b = StaticHostProvider.Host(host: "10.0.0.2")
        var reminder = StaticHostProvider.UnreachableReminder()
        reminder.note([(a, "refused"), (b, nil)], at: 100)
        #expect(reminder.due(at: 100, interval: 60, hosts: 2, retryInterval: 10, reasons: ["refused"]) == nil)
        for t in stride(from: 110.0, through: 150, by: 10) {
            reminder.note([(a, "refused")], at: t)
            #expect(reminder.due(at: t, interval: 60, hosts: 2, retryInterval: 10, reasons: ["refused"]) == nil)
        }
        reminder.note([(a, "refused")], at: 160)
        let first = reminder.due(at: 160, interval: 60, hosts: 2, retryInterval: 10, reasons: ["refused"])
        #expect(first?.message == "still unreachable: 1 of 2 host(s), the longest for 60 s; 7 failed probe(s) since the last summary, retried every 10 s: refused")
        #expect(first?.fields["probes"] == .int(7))
        #expect(reminder.due(at: 170, interval: 60, hosts: 2, retryInterval: 10, reasons: ["refused"]) == nil)
        // It answers: the outage is over, and the next one starts its own interval.
        reminder.note([(a, nil)], at: 170)
        #expect(reminder.due(at: 300, interval: 60, hosts: 2, retryInterval: 10, reasons: []) == nil)
        reminder.note([(b, "timed out")], at: 300)
        #expect(reminder.due(at: 330, interval: 60, hosts: 2, retryInterval: 10, reasons: ["timed out"]) == nil)
        reminder.note([(b, "timed out")], at: 360)
        #expect(reminder.due(at: 360, interval: 60, hosts: 2, retryInterval: 10, reasons: ["timed out"])?.fields["probes"] == .int(2))
    }

    @Test("an unreachable host: one warning (the problem line), no warning per probe, one summary per interval")
    func unreachableNoiseIsBounded() async throws {
        try await withSenderRig { rig in
            let provider = StaticHostProvider(hosts: [.init(host: "127.0.0.1", port: 1, name: "Nowhere")], retryInterval: 0.05,
                                              recheckInterval: 0.2, connectTimeout: 2, reminderInterval: 1, group: rig.group,
                                              logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: .any)
            await manager.add(provider)
            let start = ContinuousClock.now
            await manager.start()
            let summaries = { rig.logRecords.filter { $0.className == "StaticHostProvider" && $0.message.hasPrefix("still unreachable") } }
            #expect(await pollUntil(timeout: 30) { summaries().count >= 2 })
            await manager.stop()
            let elapsed = ContinuousClock.now - start
            let records = rig.logRecords
            let probes = records.filter { $0.className == "CastConnection" && $0.message.hasPrefix("cannot connect") }
            // Many probes (every 50 ms), each a debug record; none a warning.
            #expect(probes.count >= 10, "\(probes.count) probes")
            #expect(probes.allSatisfy { $0.level == .debug })
            #expect(probes.first?.message == "cannot connect: connection refused (ECONNREFUSED): nothing accepts connections on that port")
            let warnings = records.filter { $0.level >= .warning }
            #expect(warnings.map(\.message) == ["provider static: 1 of 1 host(s) unreachable: cannot connect to 127.0.0.1:1: connection refused (ECONNREFUSED): nothing accepts connections on that port"])
            // One summary per full interval, each counting the probes since the one before.
            let done = summaries()
            #expect(done.count <= Int(elapsed / .seconds(1)), "\(done.count) summaries in \(elapsed)")
            #expect(done.allSatisfy { $0.level == .info && $0.fields["unreachable"] == .int(1) })
            let counted = done.compactMap { if case .int(let n)? = $0.fields["probes"] { return Int(n) } else { return nil } }
            #expect(counted.reduce(0, +) <= probes.count && counted.allSatisfy { $0 >= 2 }, "\(counted) of \(probes.count)")
        }
    }

    @Test("a listed host whose device the caller is connected to is not re-probed; once it is not, it is again")
    func connectedDeviceIsNotReprobed() async throws {
        try await withSenderRig { rig in
            let device = rig.simulator.devices[0].configuration
            let connected = Atomic(true)
            // The device's own eureka_info ports: its identity is settled at the first probe.
            let provider = StaticHostProvider(hosts: [.init(host: device.address, port: device.castPort)], retryInterval: 0.05,
                                              recheckInterval: 0.05, isConnected: { $0 == device.uuid && connected.load(ordering: .relaxed) },
                                              eurekaPorts: (device.httpsPort, device.httpPort), group: rig.group, logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: .any)
            await manager.add(provider)
            await manager.start()
            #expect(await manager.waitForDevice(timeout: 10) { $0.id == device.uuid } != nil)
            // Rounds go on every 50 ms; none of them probes the connected device.
            let rounds = provider.roundsRun
            #expect(await pollUntil(timeout: 10) { provider.roundsRun >= rounds + 5 })
            #expect(provider.probesMade == 1)
            // Its connection gone, the host is probed at its next recheck (and still listed).
            connected.store(false, ordering: .relaxed)
            #expect(await pollUntil(timeout: 10) { provider.probesMade >= 3 })
            #expect(await manager.devices.map(\.id) == [device.uuid])
            await manager.stop()
        }
    }

    @Test("a connected device whose eureka_info does not answer is probed again at the next rechecks, then no more")
    func unansweredIdentityIsAskedAFewTimes() async throws {
        try await withSenderRig { rig in
            let device = rig.simulator.devices[0].configuration
            // Port 9 refuses: no eureka_info answer, ever.
            let provider = StaticHostProvider(hosts: [.init(host: device.address, port: device.castPort)], retryInterval: 0.05,
                                              recheckInterval: 0.05, isConnected: { $0 == device.uuid }, eurekaPorts: (9, 9),
                                              group: rig.group, logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: .any)
            await manager.add(provider)
            await manager.start()
            #expect(await manager.waitForDevice(timeout: 10) { $0.id == device.uuid } != nil)
            #expect(await pollUntil(timeout: 10) { provider.probesMade >= StaticHostProvider.identityAttempts })
            let rounds = provider.roundsRun
            #expect(await pollUntil(timeout: 10) { provider.roundsRun >= rounds + 5 })
            #expect(provider.probesMade == StaticHostProvider.identityAttempts)
            await manager.stop()
        }
    }

    @Test("two configured hosts for one device: one of them failing does not remove the device")
    func sameDeviceTwice() async throws {
        try await withSenderRig(count: 2) { rig in
            let a = rig.simulator.devices[0].configuration, b = rig.simulator.devices[1].configuration
            // The second entry claims the first device's id (a second address of the same TV).
            let provider = StaticHostProvider(hosts: [.init(host: a.address, port: a.castPort, name: "TV"),
                                                      .init(host: b.address, port: b.castPort, name: "TV", id: a.uuid)],
                                              retryInterval: 0.2, recheckInterval: 0.2, group: rig.group, logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: .any)
            await manager.add(provider)
            await manager.start()
            #expect(await manager.waitForDevice(timeout: 10) { $0.id == a.uuid } != nil)
            let events = manager.events()
            try await rig.control(["command": "outage", "device": 1, "downFor": 1.5])
            // Long enough for several probes of the down host.
            let removed = await events.first(within: 1.2) { if case .removed = $0 { return true }; return false }
            #expect(removed == nil, "the device stayed listed")
            #expect(await manager.devices.map(\.id) == [a.uuid])
            await manager.stop()
        }
    }

    @Test("CastContext: static hosts discovered, a session started on the listed device")
    func context() async throws {
        try await withSenderRig { rig in
            let device = rig.simulator.devices[0].configuration
            let options = rig.options()
            let provider = StaticHostProvider(hosts: [.init(host: device.address, port: device.castPort)], group: rig.group,
                                              logSystem: rig.logSystem)
            let context = await CastContext(options: options, providers: [provider])
            rig.atStop { await context.shutdown(stopCasting: true) }
            let found = try #require(await context.discoveryManager.waitForDevice(timeout: 10) { _ in true })
            let session = try await context.sessionManager.startSession(on: found)
            #expect(await session.state == .connected)
            await context.shutdown(stopCasting: true)
            #expect(await session.state == .ended(nil))
            #expect(try await rig.state()["app"] == .null)
        }
    }
}
