import CastCore
import CastLogging
import CastReceiverSim
import NIOCore
import Synchronization
import SystemCrypto

/// The simulator's speaker groups: each group's endpoint (a ``SimulatedDevice`` with model
/// `Google Cast Group` on its leader's address), its members, and what ties them together —
/// a group cast plays on every member that has not left, a member's own cast leaves, a leader
/// move replaces the endpoint (same uuid, session carried over at its position).
///
/// Thread-safe: the group table is behind a mutex; every device's state is changed on its own
/// loop. Devices report to the coordinator from their loops (``groupPlaybackChanged(endpoint:playing:)``,
/// ``memberLeft(_:groups:)``).
public final class GroupCoordinator: Sendable {
    struct Record: Sendable {
        var configuration: SimulatedGroupConfiguration
        var endpoint: SimulatedDevice
        /// Which members play the group's media.
        var playback = GroupPlayback()
        var playing: Bool { playback.isPlaying }
        var left: Set<Int> { playback.left }
        /// Leader moves so far (the endpoint's device index grows with it, for fresh ids).
        var moves = 0
    }

    struct Factory: Sendable {
        var settings: SimulatorSettings
        var authority: SimulatorAuthority
        var frameLog: FrameLog?
        var advertiser: MDNSAdvertiser?
        var logSystem: LogSystem
    }

    let devices: [SimulatedDevice]
    let loop: EventLoop
    private let loops: EventLoopGroup
    private let factory: Factory
    private let table: Mutex<[Record]>
    let log: Logger

    init(devices: [SimulatedDevice], loops: EventLoopGroup, factory: Factory) {
        self.devices = devices
        self.loops = loops
        loop = loops.next()
        self.factory = factory
        table = Mutex([])
        log = Logger(class: "GroupCoordinator", system: factory.logSystem)
    }

    /// The groups now: configuration (members, leader) and endpoint.
    public var groups: [(configuration: SimulatedGroupConfiguration, endpoint: SimulatedDevice)] {
        table.withLock { records in records.map { ($0.configuration, $0.endpoint) } }
    }

    // MARK: Start and stop

    /// Creates and starts every group's endpoint and tells the members their groups.
    func start(_ configurations: [SimulatedGroupConfiguration]) async throws {
        for configuration in configurations {
            let endpoint = try makeEndpoint(configuration, generation: 0)
            table.withLock { $0.append(Record(configuration: configuration, endpoint: endpoint)) }
            let state = groupState(configuration)
            try await endpoint.onLoop { device in device.mutateState { s, _ in s.becomeGroup(state); return [] } }.get()
            try await endpoint.start().get()
            log.info("group \(configuration.name) on \(endpoint.configuration.address):\(endpoint.configuration.castPort)", [
                "group": .string(configuration.uuid), "members": .int(configuration.members.count),
                "leader": .int(configuration.leader),
            ])
        }
        try await updateMemberships().get()
    }

    func stop() async {
        for endpoint in table.withLock({ $0.map(\.endpoint) }) { try? await endpoint.stop().get() }
    }

    /// A group's endpoint device: its own uuid, model `Google Cast Group`, the leader's address.
    func makeEndpoint(_ group: SimulatedGroupConfiguration, generation: Int) throws -> SimulatedDevice {
        let leader = devices[group.leader].configuration
        let port = group.castPort(leader: group.leader)
        var configuration = SimulatedDeviceConfiguration(
            name: group.name, uuid: group.uuid, model: Multizone.groupModel, address: leader.address, castPort: port,
            httpPort: port + 1, httpsPort: port + 2, isVideoDevice: false, tlsProfile: factory.settings.tlsProfile)
        configuration.tlsProfile = configuration.effectiveTLSProfile(fallback: factory.settings.tlsProfile)
        let identity: DeviceIdentity
        do {
            identity = try DeviceIdentity.issue(for: group.uuid, authority: factory.authority, audioOnly: true,
                                                profile: configuration.effectiveTLSProfile())
        } catch {
            throw SimulatorError.crypto("cannot create group credentials: \(error)")
        }
        let index = devices.count + (table.withLock { $0.count }) + 1000 * generation
        let endpoint = SimulatedDevice(index: index, configuration: configuration, settings: factory.settings, loop: loops.next(),
                                       identity: identity, frameLog: factory.frameLog, advertiser: factory.advertiser,
                                       logSystem: factory.logSystem, coordinator: self)
        return endpoint
    }

    func groupState(_ group: SimulatedGroupConfiguration) -> MultizoneGroupState {
        let members = group.members.map { member(index: $0, in: group, playback: .idle) }
        return MultizoneGroupState(members: members, isMultichannel: group.stereoPair != nil)
    }

    func member(index: Int, in group: SimulatedGroupConfiguration, playback: MultizonePlayback) -> MultizoneMember {
        let c = devices[index].configuration
        var channel: String?
        if let pair = group.stereoPair, let side = pair.firstIndex(of: index) { channel = side == 0 ? "LEFT" : "RIGHT" }
        return MultizoneMember(uuid: c.uuid, name: c.name, capabilities: c.capabilityBits, playback: playback, channel: channel)
    }

    /// Tells every device the groups it is a member of (eureka_info, CASTING_GROUPS, `list`).
    func updateMemberships() -> EventLoopFuture<Void> {
        let records = table.withLock { $0 }
        let futures = devices.enumerated().map { index, device in
            let references = records.filter { $0.configuration.members.contains(index) }.map { record in
                MultizoneGroupReference(uuid: record.configuration.uuid, name: record.configuration.name,
                                        leaderAddress: record.endpoint.configuration.address,
                                        leaderPort: record.endpoint.configuration.castPort,
                                        isLeader: record.configuration.leader == index)
            }
            return device.onLoop { device in device.mutateState { s, _ in s.setGroupMemberships(references); return [] } }
        }
        return EventLoopFuture.andAllSucceed(futures, on: loop)
    }

    // MARK: Events from devices (their loops)

    /// A group endpoint started or stopped playing: every member that has not left follows.
    func groupPlaybackChanged(endpoint: SimulatedDevice, playing: Bool) {
        let found: (Record, [Int])? = table.withLock { records in
            guard let i = records.firstIndex(where: { $0.endpoint === endpoint }),
                  let changed = records[i].playback.playbackChanged(playing: playing, members: records[i].configuration.members)
            else { return nil }
            return (records[i], changed)
        }
        guard let (record, changed) = found else { return }
        log.info("group \(record.configuration.name) \(playing ? "plays" : "stopped")", [
            "group": .string(record.configuration.uuid), "playing": .bool(playing),
        ])
        for index in changed { setFollowing(record, member: index, playing: playing) }
    }

    /// A member cast on its own: it left these groups' playback.
    func memberLeft(_ device: SimulatedDevice, groups uuids: [String]) {
        guard let index = devices.firstIndex(where: { $0 === device }) else { return }
        let affected: [Record] = table.withLock { records in
            var result: [Record] = []
            for i in records.indices where uuids.contains(records[i].configuration.uuid) {
                if records[i].playback.memberLeft(index, members: records[i].configuration.members) { result.append(records[i]) }
            }
            return result
        }
        for record in affected {
            log.info("member \(device.configuration.name) left the playback of \(record.configuration.name)", [
                "group": .string(record.configuration.uuid), "member": .string(device.configuration.uuid),
            ])
            let uuid = device.configuration.uuid
            _ = record.endpoint.onLoop { endpoint in
                endpoint.mutateState { s, now in s.setMemberPlayback(uuid: uuid, .left, now: now) }
            }
        }
    }

    /// Member `index` plays (or stops playing) the group's media; the endpoint says so too.
    func setFollowing(_ record: Record, member index: Int, playing: Bool) {
        let groupUUID = record.configuration.uuid
        let memberUUID = devices[index].configuration.uuid
        _ = devices[index].onLoop { device in
            device.mutateState { s, now in
                // The group takes the member over: it says so first, then the member's own app
                // (another sender's cast) stops.
                var out = s.followGroupPlayback(groupUUID, playing: playing, now: now)
                if playing { out += s.stopRunningApp(now: now) }
                return out
            }
        }
        _ = record.endpoint.onLoop { endpoint in
            endpoint.mutateState { s, now in s.setMemberPlayback(uuid: memberUUID, playing ? .playing : .idle, now: now) }
        }
    }

    // MARK: Table access for the control commands

    func record(_ selector: JSONValue?) throws(SimulatorError) -> Record {
        let records = table.withLock { $0 }
        guard !records.isEmpty else { throw .control("the simulator has no groups (\"groups\" in the config file)") }
        guard let selector, !selector.isNull else { throw .control("\"group\" is required (an index, uuid or name)") }
        if let index = selector.int {
            guard records.indices.contains(Int(index)) else {
                throw .control("no group \(index) (there are \(records.count): 0…\(records.count - 1))")
            }
            return records[Int(index)]
        }
        guard let text = selector.string else { throw .control("\"group\" must be an index, uuid or name") }
        let wanted = text.lowercased().filter { $0 != "-" }
        guard let found = records.first(where: { $0.configuration.uuid == wanted || $0.configuration.name == text }) else {
            throw .control("no group named or with uuid \"\(text)\"")
        }
        return found
    }

    func update(_ uuid: String, _ body: (inout Record) -> Void) -> Record? {
        table.withLock { records in
            guard let i = records.firstIndex(where: { $0.configuration.uuid == uuid }) else { return nil }
            body(&records[i])
            return records[i]
        }
    }

    func deviceIndex(_ selector: JSONValue?) throws(SimulatorError) -> Int {
        guard let selector, !selector.isNull else { throw .control("\"device\" is required (an index, uuid or name)") }
        if let index = selector.int {
            guard devices.indices.contains(Int(index)) else { throw .control("no device \(index)") }
            return Int(index)
        }
        guard let text = selector.string else { throw .control("\"device\" must be an index, uuid or name") }
        let wanted = text.lowercased().filter { $0 != "-" }
        guard let index = devices.firstIndex(where: { $0.configuration.uuid == wanted || $0.configuration.name == text }) else {
            throw .control("no device named or with uuid \"\(text)\"")
        }
        return index
    }

    var endpoints: [SimulatedDevice] { table.withLock { $0.map(\.endpoint) } }

    var allRecords: [Record] { table.withLock { $0 } }
}
