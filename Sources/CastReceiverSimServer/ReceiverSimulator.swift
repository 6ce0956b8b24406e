import CastCore
import CastDeviceAuth
import CastLogging
import CastReceiverSim
import NIOCore
import NIOPosix
import NIOSSL
import SystemCrypto

/// A running receiver simulator: N devices, each with its own TLS identity, sockets, state
/// machine and mDNS advertisement; an optional frame log and control socket.
///
/// Start with ``start(devices:settings:logSystem:)``, stop with ``stop()``. Thread-safe.
public final class ReceiverSimulator: Sendable {
    public let devices: [SimulatedDevice]
    /// The root CA every device's auth chain ends at (export it as a trust anchor).
    public let authority: SimulatorAuthority
    public let control: SimulatorControl
    /// The speaker groups (``SimulatedGroupConfiguration``): their endpoints and members.
    public let groups: GroupCoordinator
    public let advertiser: MDNSAdvertiser?
    private let group: MultiThreadedEventLoopGroup
    private let controlServer: ControlSocketServer?
    private let frameLog: FrameLog?
    private let log: Logger

    private init(devices: [SimulatedDevice], authority: SimulatorAuthority, control: SimulatorControl, groups: GroupCoordinator,
                 advertiser: MDNSAdvertiser?, group: MultiThreadedEventLoopGroup, controlServer: ControlSocketServer?,
                 frameLog: FrameLog?, log: Logger) {
        self.devices = devices
        self.groups = groups
        self.authority = authority
        self.control = control
        self.advertiser = advertiser
        self.group = group
        self.controlServer = controlServer
        self.frameLog = frameLog
        self.log = log
    }

    /// Creates credentials, binds every device and group endpoint and starts advertising. On
    /// failure everything already started is stopped again and the error says which address and
    /// port failed.
    public static func start(devices configurations: [SimulatedDeviceConfiguration],
                             groups groupConfigurations: [SimulatedGroupConfiguration] = [], settings: SimulatorSettings,
                             logSystem: LogSystem = .shared) async throws -> ReceiverSimulator {
        let log = Logger(class: "ReceiverSimulator", system: logSystem)
        // The wall clock's offset is read once, now (``SimulatorWallClock``).
        _ = SimulatorWallClock.offsetNanoseconds
        guard !configurations.isEmpty else { throw SimulatorError.configuration("no devices to simulate") }
        try SimulatorConfigurationCheck.validate(configurations)
        try SimulatedGroupConfiguration.validate(groupConfigurations, devices: configurations)
        let authority: SimulatorAuthority
        do {
            if let given = settings.authority {
                authority = given
            } else if let directory = settings.authorityDirectory {
                authority = try SimulatorAuthority.loadOrCreate(directory: directory)
            } else {
                authority = try SimulatorAuthority.generate()
            }
        } catch {
            throw SimulatorError.crypto("cannot create the simulator certificate authority: \(error)")
        }
        let frameLog = try settings.frameLogPath.map { path throws(SimulatorError) in try FrameLog(path: path) }
        let advertiser: MDNSAdvertiser? = settings.advertise ? try MDNSAdvertiser(logSystem: logSystem) : nil
        let threads = settings.threads ?? min(4, max(1, System.coreCount))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var devices: [SimulatedDevice] = []
        do {
            for (index, given) in configurations.enumerated() {
                // Resolved here, so the device's configuration (and `list`) names the profile it serves.
                var configuration = given
                configuration.tlsProfile = given.effectiveTLSProfile(fallback: settings.tlsProfile)
                devices.append(SimulatedDevice(
                    index: index, configuration: configuration, settings: settings, loop: group.next(),
                    identity: try DeviceIdentity.issue(for: configuration.uuid, authority: authority,
                                                      audioOnly: !configuration.isVideoDevice,
                                                      profile: configuration.effectiveTLSProfile()),
                    frameLog: frameLog, advertiser: advertiser, logSystem: logSystem))
            }
        } catch let error as SimulatorError {
            try? await group.shutdownGracefully()
            throw error
        } catch {
            try? await group.shutdownGracefully()
            throw SimulatorError.crypto("cannot create device credentials: \(error)")
        }
        let coordinator = GroupCoordinator(devices: devices, loops: group, factory: .init(
            settings: settings, authority: authority, frameLog: frameLog, advertiser: advertiser, logSystem: logSystem))
        for device in devices { device.coordinator = coordinator }
        var started: [SimulatedDevice] = []
        do {
            for device in devices {
                try await device.start().get()
                started.append(device)
            }
            try await coordinator.start(groupConfigurations)
        } catch {
            await coordinator.stop()
            for device in started { try? await device.stop().get() }
            try? await group.shutdownGracefully()
            throw error
        }
        let control = SimulatorControl(devices: devices, groups: coordinator, loop: group.next(), logSystem: logSystem)
        var controlServer: ControlSocketServer?
        if let path = settings.controlSocketPath {
            do {
                controlServer = try await ControlSocketServer.start(path: path, control: control, group: group,
                                                                    logSystem: logSystem).get()
            } catch {
                await coordinator.stop()
                for device in devices { try? await device.stop().get() }
                try? await group.shutdownGracefully()
                throw error
            }
        }
        log.info("simulating \(devices.count) device(s) on \(threads) event loop(s)", [
            "devices": .int(devices.count), "threads": .int(threads),
        ])
        return ReceiverSimulator(devices: devices, authority: authority, control: control, groups: coordinator, advertiser: advertiser,
                                 group: group, controlServer: controlServer, frameLog: frameLog, log: log)
    }

    /// `count` devices on 127.0.0.1 in the ports layout at a random base port in 30000…59999,
    /// trying another base when a port is taken (at most 8 tries): a private simulator for tests
    /// and for developers of senders and channels. The devices' ports are in ``devices``.
    /// `configure` adjusts each device (e.g. `isVideoDevice = false` for a speaker).
    /// `groups` get their ports right after the devices' (their `castPort` is replaced).
    public static func startOnFreePorts(count: Int = 1, groups: [SimulatedGroupConfiguration] = [],
                                        settings: SimulatorSettings, logSystem: LogSystem = .shared,
                                        configure: (inout SimulatedDeviceConfiguration) -> Void = { _ in })
        async throws -> ReceiverSimulator {
        var lastError: Error?
        for attempt in 0..<8 {
            let base = 30_000 + Int(UInt32.random(in: 0..<10_000)) * 3 + attempt
            var configurations = try DeviceFleet.make(count: count, layout: .ports, basePort: base)
            for index in configurations.indices { configure(&configurations[index]) }
            var placed = groups
            for index in placed.indices {
                placed[index].castPort = base + 3 * count + SimulatedGroupConfiguration.portsPerGroup * index
            }
            do {
                return try await start(devices: configurations, groups: placed, settings: settings, logSystem: logSystem)
            } catch let error as SimulatorError {
                lastError = error
                if case .bind = error { continue }
                throw error
            }
        }
        throw lastError ?? SimulatorError.configuration("no free ports found")
    }

    /// Closes every connection and listener, the control socket and the event loops.
    public func stop() async {
        try? await controlServer?.stop().get()
        await groups.stop()
        for device in devices { try? await device.stop().get() }
        try? await group.shutdownGracefully()
        log.info("simulator stopped")
    }
}

/// Checks a device list before anything binds: unique uuids, unique address:port pairs, valid uuids.
enum SimulatorConfigurationCheck {
    static func validate(_ devices: [SimulatedDeviceConfiguration]) throws(SimulatorError) {
        var uuids: Set<String> = []
        var endpoints: [String: String] = [:]
        for device in devices {
            guard device.uuid.utf8.count == 32, device.uuid.utf8.allSatisfy({ isLowerHex($0) }) else {
                throw .configuration("device \"\(device.name)\": uuid \"\(device.uuid)\" must be 32 lowercase hex digits")
            }
            guard uuids.insert(device.uuid).inserted else {
                throw .configuration("device \"\(device.name)\": uuid \(device.uuid) is used twice")
            }
            for port in [device.castPort, device.httpPort, device.httpsPort] {
                guard (1...65535).contains(port) else { throw .configuration("device \"\(device.name)\": port \(port) out of range") }
                let key = "\(device.address):\(port)"
                if let other = endpoints[key] {
                    throw .configuration("devices \"\(other)\" and \"\(device.name)\" both use \(key)")
                }
                endpoints[key] = device.name
            }
        }
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
