import CastCore
import CastReceiverSimServer
import CastSender
import CastTestSupport
import CastTransport
import Testing

/// A device reached by address takes its identity from its eureka_info, as mDNS discovery takes
/// it from the TXT record: ``AddressedDeviceIdentity`` (pure) and ``StaticHostProvider`` against
/// the simulator (a device, and a speaker group's endpoint on its leader's address).
@Suite("AddressedDeviceIdentity", .timeLimit(.minutes(1)))
struct AddressedDeviceIdentityTests {
    static let groupID = "6d2e7f80a1b2c3d4e5f60718293a4b5c"
    static let hub = EurekaDeviceInfo(name: "Kitchen display", id: "0123456789abcdef0123456789abcdef", model: "Google Nest Hub",
                                      displaySupported: true,
                                      groups: [EurekaGroupEntry(id: groupID, name: "Downstairs", castPort: 32187),
                                               EurekaGroupEntry(id: "fedcba9876543210fedcba9876543210", name: "Everywhere")])

    static func address(_ port: Int = 8009) -> CastDevice {
        CastDevice(id: "10.0.0.5:\(port)", friendlyName: "10.0.0.5:\(port)", host: "10.0.0.5", port: port, provider: "address")
    }

    @Test("on 8009: the device's id, name, model and capabilities; a configured name, id and model win")
    func deviceOnTheCastPort() {
        let plain = AddressedDeviceIdentity.identify(Self.address(), eureka: Self.hub, keepName: false, keepID: false, model: nil)
        #expect(plain.id == "0123456789abcdef0123456789abcdef" && plain.friendlyName == "Kitchen display")
        #expect(plain.modelName == "Google Nest Hub" && !plain.isGroup && !plain.mayBeGroup)
        #expect(plain.capabilities == [.videoOut, .audioOut])

        var configured = Self.address()
        configured.id = "lobby-id"
        configured.friendlyName = "Lobby"
        let kept = AddressedDeviceIdentity.identify(configured, eureka: Self.hub, keepName: true, keepID: true, model: "Google Nest Hub Max")
        #expect(kept.id == "lobby-id" && kept.friendlyName == "Lobby" && kept.modelName == "Google Nest Hub Max")

        var speaker = Self.hub
        speaker.displaySupported = false
        speaker.model = "Google Home"
        #expect(AddressedDeviceIdentity.identify(Self.address(), eureka: speaker, keepName: false, keepID: false, model: nil).capabilities == [.audioOut])
    }

    @Test("on the port the device leads a group at: the group, with its uuid, name and model")
    func groupLedAtThatPort() {
        let group = AddressedDeviceIdentity.identify(Self.address(32187), eureka: Self.hub, keepName: false, keepID: false, model: nil)
        #expect(group.id == Self.groupID && group.friendlyName == "Downstairs")
        #expect(group.isGroup && group.modelName == CastDevice.groupModelName)
        #expect(group.capabilities == [.audioOut, .multizoneGroup])
        // A configured name stays; the model still says group.
        var named = Self.address(32187)
        named.friendlyName = "Downstairs speakers"
        let configured = AddressedDeviceIdentity.identify(named, eureka: Self.hub, keepName: true, keepID: false, model: nil)
        #expect(configured.friendlyName == "Downstairs speakers" && configured.id == Self.groupID && configured.isGroup)
    }

    @Test("another port, or no answer: nothing from eureka_info (it describes the host's device); the configured model still applies")
    func nothingForAnotherEndpoint() {
        let other = AddressedDeviceIdentity.identify(Self.address(20000), eureka: Self.hub, keepName: false, keepID: false, model: nil)
        #expect(other == Self.address(20000))
        // pychromecast takes such an endpoint for a group; castline's session asks it (GET_STATUS).
        #expect(other.mayBeGroup && !other.isGroup)
        #expect(AddressedDeviceIdentity.identify(Self.address(), eureka: nil, keepName: false, keepID: false, model: nil) == Self.address())
        // A certificate that names the id eureka_info gives: the device itself, on any port.
        let proven = AddressedDeviceIdentity.identify(Self.address(20000), eureka: Self.hub, keepName: false, keepID: false, model: nil,
                                                      certificateID: "01234567-89ab-cdef-0123-456789ABCDEF")
        #expect(proven.modelName == "Google Nest Hub" && proven.friendlyName == "Kitchen display")
        #expect(AddressedDeviceIdentity.identify(Self.address(20000), eureka: Self.hub, keepName: false, keepID: false, model: nil,
                                                 certificateID: "someone-else") == Self.address(20000))
        let overridden = AddressedDeviceIdentity.identify(Self.address(), eureka: nil, keepName: false, keepID: false, model: "Google Nest Hub")
        #expect(overridden.modelName == "Google Nest Hub" && !overridden.mayBeGroup)
        #expect(AddressedDeviceIdentity.summary(overridden, eureka: nil, model: "Google Nest Hub") == #"model "Google Nest Hub" (devices[].model)"#)
        #expect(AddressedDeviceIdentity.summary(Self.address(), eureka: nil, model: nil) == "no model (no eureka_info answer)")
    }

    @Test("eureka_info's capabilities and multizone groups are read; a group entry needs a uuid, and leads here only with elected_leader self")
    func parsing() {
        let body = Array(#"""
            {"name":"Kitchen speaker","ssdp_udn":"0a1b2c3d-4e5f-6071-8293-a4b5c6d7e801",
             "device_info":{"model_name":"Google Home","capabilities":{"display_supported":false}},
             "multizone":{"groups":[
               {"name":"Downstairs","uuid":"6d2e7f80-a1b2-c3d4-e5f6-0718293a4b5c","elected_leader":"self","cast_port":32187},
               {"name":"Upstairs","uuid":"11112222333344445555666677778888","elected_leader":"10.0.0.9:42001"},
               {"name":"broken","uuid":"not-a-uuid","elected_leader":"self","cast_port":1},
               {"name":"","uuid":"99990000999900009999000099990000","elected_leader":"self","cast_port":70000}]}}
            """#.utf8)
        let info = EurekaDeviceInfo.parse(body: body, peerCommonName: nil)
        #expect(info?.displaySupported == false && info?.model == "Google Home")
        #expect(info?.groups == [EurekaGroupEntry(id: Self.groupID, name: "Downstairs", castPort: 32187),
                                 EurekaGroupEntry(id: "11112222333344445555666677778888", name: "Upstairs"),
                                 EurekaGroupEntry(id: "99990000999900009999000099990000", name: "99990000999900009999000099990000")])
        #expect(info?.group(ledAt: 32187)?.name == "Downstairs" && info?.group(ledAt: 42001) == nil)
    }

    @Test("StaticHostProvider: a device by address gets its model; the group's endpoint on its leader's address is the group")
    func staticHostsAgainstTheSimulator() async throws {
        let group = SimulatedGroupConfiguration(name: "Downstairs", uuid: Self.groupID, members: [0, 1], leader: 0, castPort: 0)
        try await withTeardown(try await SenderRig.start(count: 2, groups: [group]), { await $0.stop() }) { rig in
            let leader = rig.simulator.devices[0].configuration
            let endpoint = rig.simulator.groups.groups[0].endpoint.configuration
            let provider = StaticHostProvider(hosts: [.init(host: leader.address, port: leader.castPort),
                                                      .init(host: endpoint.address, port: endpoint.castPort, name: "Downstairs speakers"),
                                                      .init(host: leader.address, port: leader.castPort, name: "Overridden", id: "override-id",
                                                            model: "Google Nest Hub Max")],
                                              retryInterval: 0.2, recheckInterval: 0.2, connectTimeout: 3,
                                              eurekaPorts: (leader.httpsPort, leader.httpPort), group: rig.group, logSystem: rig.logSystem)
            let manager = rig.discoveryManager(criteria: .any)
            await manager.add(provider)
            await manager.start()
            #expect(await pollUntil(timeout: 15) { await manager.devices.count == 3 })
            let found = Dictionary(await manager.devices.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let device = found[leader.uuid]
            #expect(!leader.model.isEmpty && device?.modelName == leader.model && device?.friendlyName == leader.name && device?.isGroup == false)
            let asGroup = found[Self.groupID]
            #expect(asGroup?.isGroup == true && asGroup?.friendlyName == "Downstairs speakers" && asGroup?.port == endpoint.castPort)
            #expect(found["override-id"]?.modelName == "Google Nest Hub Max")
            await manager.stop()
            let lines = rig.logRecords.filter { $0.className == "StaticHostProvider" && $0.level == .info }.map(\.message)
            #expect(lines.contains { $0.contains("model \"\(leader.model)\" (eureka_info)") }, "\(lines)")
            #expect(lines.contains { $0.contains("a speaker group led by \(leader.address)") }, "\(lines)")
        }
    }
}
