import CastCore
import CastDeviceAuth
import CastHTTP
import CastProtocol
import CastLogging
import CastReceiverSim
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SystemCrypto

/// One simulated Cast device on real sockets: CASTV2 over TLS, eureka_info over HTTP and HTTPS,
/// its ``ReceiverDevice`` state machine, its connections, timers and faults.
///
/// Isolation: every mutable member is touched only on `loop` (the device's event loop; its
/// listening and accepted channels live there too). Public entry points hop onto the loop.
public final class SimulatedDevice: @unchecked Sendable {
    public let configuration: SimulatedDeviceConfiguration
    public let index: Int
    let loop: EventLoop
    let log: Logger
    let logSystem: LogSystem
    let settings: SimulatorSettings
    private let frameLog: FrameLog?
    private let advertiser: MDNSAdvertiser?
    private let startedAt = MonotonicClock.seconds()

    // Loop-confined state.
    private var state: ReceiverDevice
    private(set) var connections: [SenderConnectionID: ReceiverConnectionHandler] = [:]
    /// `--replay`: which recorded requests each connection has been answered with.
    var replayCursors: [SenderConnectionID: ReplayCursor] = [:]
    /// `--replay`: the cursor of the connection a recorded drop closed, for the next one.
    var droppedReplayCursor: ReplayCursor?
    private var nextConnection: UInt64 = 1
    private var listeners: [Channel] = []
    /// TLS certificate and device-auth responder for new connections (renewed before expiry).
    private var identity: DeviceIdentity
    private var renewalTask: RepeatedTask?
    private var deadlineTask: Scheduled<Void>?
    private var scheduledDeadline: Double?
    var faults: DeviceFaults
    private(set) var isDown = false
    /// Results of fetching LOADed media (newest last, bounded).
    var mediaFetches: [JSONValue] = []
    /// The simulator's groups (set before ``start()``): told when this group endpoint starts or
    /// stops playing and when this member leaves a group's playback.
    weak var coordinator: GroupCoordinator?
    /// What the coordinator was last told about this group endpoint's playback.
    private var reportedGroupPlaying = false
    /// The device has run an app (not the idle screen) since it started: the advertised `st`/`rs`
    /// are its own from then on, not the recorded ones (`--replay`).
    private var ranAnApp = false
    /// The field profile's next daily reboot (``SimulatedDevice+DailyReboot``).
    var dailyRebootTask: Scheduled<Void>?
    /// Draws each day's reboot moment in its window; seeded by the device's index.
    var rebootRandom: IdentifierGenerator
    /// The device's field profile (after the simulator's time scale).
    let fieldProfile: FieldProfile
    /// The time of day the daily reboot's window is read on.
    let dayClock: FieldDayClock
    /// One-way delay of every CASTV2 message on this device's connections, both directions
    /// (the config's `latency`, the control command `latency`). Zero: no delay line at all.
    var latency: JitteredDelay
    /// Draws each message's latency jitter; seeded by the device's index and `--seed`.
    private var latencyRandom: IdentifierGenerator

    init(index: Int, configuration: SimulatedDeviceConfiguration, settings: SimulatorSettings, loop: EventLoop,
         identity: DeviceIdentity, frameLog: FrameLog?, advertiser: MDNSAdvertiser?,
         logSystem: LogSystem, coordinator: GroupCoordinator? = nil) {
        self.index = index
        self.coordinator = coordinator
        self.configuration = configuration
        self.settings = settings
        self.loop = loop
        self.identity = identity
        self.frameLog = frameLog
        self.advertiser = advertiser
        faults = settings.initialFaults
        self.logSystem = logSystem
        log = Logger(class: "SimulatedDevice", system: logSystem).with([
            "device": .string(configuration.uuid), "deviceName": .string(configuration.name),
        ])
        var profile = configuration.profile
        profile.field = settings.fieldProfile(for: configuration)
        fieldProfile = profile.field
        dayClock = FieldDayClock(scale: settings.fieldTimeScale)
        let fieldSeed = IdentifierGenerator.deviceSeed(index: index) ^ (settings.fieldSeed &* 0xD1B5_4A32_D192_ED03)
        rebootRandom = IdentifierGenerator(seed: fieldSeed ^ 0xDA11_EB00_7DA1_1EB0)
        latency = configuration.latency
        latencyRandom = IdentifierGenerator(seed: fieldSeed ^ 0x1A7E_7C00_1A7E_7C00)
        state = ReceiverDevice(profile: profile, catalogue: settings.catalogue,
                               mediaRules: settings.mediaRules, timing: settings.timing,
                               idSeed: IdentifierGenerator.deviceSeed(index: index), fieldSeed: fieldSeed ^ 0xF1E1_D0F1_E1D0_F1E1)
    }

    // MARK: Sockets

    /// Binds the three listeners. Fails with ``SimulatorError/bind(address:port:reason:)``.
    func start() -> EventLoopFuture<Void> {
        loop.flatSubmit {
            self.scheduleIdentityRenewal()
            self.scheduleDailyReboot(minimumDelay: 0)
            return self.bindAll()
        }
    }

    /// Renews the TLS identity every `settings.tlsRenewalInterval` (well before the 96 h expiry).
    private func scheduleIdentityRenewal() {
        let interval = TimeAmount.seconds(clamping: settings.tlsRenewalInterval)
        renewalTask = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            self?.renewIdentity()
        }
    }

    /// A new TLS key and certificate for the connections accepted from now on. On failure the
    /// old identity stays (and is retried at the next interval); the error is logged.
    func renewIdentity() {
        do {
            let old = identity.credentials.tlsCertificate
            identity = try identity.renewed()
            let new = identity.credentials.tlsCertificate
            log.info("TLS certificate renewed: serial \(new.serialNumberHex), valid until \(new.notAfter) (old one until \(old.notAfter))", [
                "serial": .string(new.serialNumberHex), "notAfter": .int(Int(new.notAfter)), "oldNotAfter": .int(Int(old.notAfter)),
            ])
            frameLogEvent("tlsRenewed", connection: nil, peer: nil, fields: [
                "serial": .string(new.serialNumberHex), "notAfter": .int(new.notAfter),
            ])
        } catch {
            log.error("TLS certificate renewal failed (the current one expires at \(identity.expires)): \(error)", [
                "notAfter": .int(Int(identity.expires)),
            ])
        }
    }

    private func bindAll() -> EventLoopFuture<Void> {
        isDown = false
        let c = configuration
        let cast = bind(port: c.castPort) { channel in self.configureCastChannel(channel) }
        let http = bind(port: c.httpPort) { channel in self.configureHTTPChannel(channel, secure: false) }
        let https = bind(port: c.httpsPort) { channel in self.configureHTTPChannel(channel, secure: true) }
        return cast.and(http).and(https).map { all in
            self.listeners = [all.0.0, all.0.1, all.1]
            self.advertiser?.publish(self.advertisement(self.state.snapshot(now: MonotonicClock.seconds()).advertisement))
            let tls = self.identity.profile
            self.log.info("listening: cast \(c.address):\(c.castPort), http :\(c.httpPort), https :\(c.httpsPort), TLS profile \(tls.rawValue)", [
                "address": .string(c.address), "castPort": .int(c.castPort), "tlsProfile": .string(tls.rawValue),
                "tlsMaxVersion": .string(tls.maximumVersion), "tlsKey": .string(tls.keyType.rawValue),
            ])
        }.flatMapError { error in
            // Close what did bind so a failed start leaves nothing behind.
            let closing = self.listeners.map { $0.close() }
            self.listeners = []
            return EventLoopFuture.andAllComplete(closing, on: self.loop).flatMapThrowing { throw error }
        }
    }

    private func bind(port: Int, initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void>)
        -> EventLoopFuture<Channel> {
        let address = configuration.address
        return ServerBootstrap(group: loop, childGroup: loop)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer(initializer)
            .bind(host: address, port: port)
            .flatMap { $0.addListenerErrorHandler(log: self.log) }
            .flatMapErrorThrowing { error in
                throw SimulatorError.bind(address: address, port: port, reason: "\(error)")
            }
    }

    private func configureCastChannel(_ channel: Channel) -> EventLoopFuture<Void> {
        loop.makeCompletedFuture {
            let id = SenderConnectionID(nextConnection)
            nextConnection += 1
            let handler = ReceiverConnectionHandler(id: id, device: self, settings: settings,
                                                    authResponder: identity.authResponder)
            let sync = channel.pipeline.syncOperations
            try addTLS(to: sync)
            try sync.addCastMessageCodec(logSystem: logSystem)
            if let frameLog {
                try sync.addHandler(FrameLogHandler(log: frameLog, device: configuration.uuid, connection: id.rawValue))
            }
            try sync.addHandler(handler)
        }
    }

    /// The server side of TLS with this device's identity; for the legacy profile with the
    /// handshake flight packed into one record, as Cast devices send it.
    private func addTLS(to sync: ChannelPipeline.SynchronousOperations) throws {
        if identity.profile == .chromecastLegacy {
            try sync.addHandler(HandshakeRecordCoalescer(log: Logger(class: "HandshakeRecordCoalescer", system: logSystem)))
        }
        try sync.addHandler(NIOSSLServerHandler(context: identity.tls))
    }

    private func configureHTTPChannel(_ channel: Channel, secure: Bool) -> EventLoopFuture<Void> {
        loop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            if secure { try addTLS(to: sync) }
            try sync.configureHTTPServerPipeline(withErrorHandling: true)
            let httpLog = Logger(class: "EurekaHTTPServer", system: logSystem).with(["device": .string(configuration.uuid)])
            try sync.addHandler(EurekaHTTPHandler(document: { [unowned self] in self.eurekaInfo() }, log: httpLog))
        }
    }

    /// Closes listeners and connections.
    func stop() -> EventLoopFuture<Void> {
        loop.flatSubmit {
            self.deadlineTask?.cancel()
            self.renewalTask?.cancel()
            self.dailyRebootTask?.cancel()
            self.dailyRebootTask = nil
            self.renewalTask = nil
            return self.goDown(reason: "simulator stopping")
        }
    }

    /// Withdraws the advertisement and closes listeners and connections (stop, reboot). On the loop.
    private func goDown(reason: String) -> EventLoopFuture<Void> {
        isDown = true
        advertiser?.withdraw(uuid: configuration.uuid)
        let closing = listeners.map { $0.close() } + connections.values.map { $0.close(reason: reason) }
        listeners = []
        return EventLoopFuture.andAllComplete(closing, on: loop)
    }

    func eurekaInfo() -> EurekaInfo {
        var info = EurekaInfo(name: configuration.name, uuid: configuration.uuid, model: configuration.model,
                              ipAddress: configuration.address, displaySupported: configuration.isVideoDevice,
                              uptime: MonotonicClock.seconds() - startedAt)
        info.groups = state.groupMemberships.groups.map(\.eurekaJSON)
        info.recorded = settings.replay?.identity.eurekaInfo
        return info
    }

    // MARK: Connection events (on loop)

    func connectionOpened(_ handler: ReceiverConnectionHandler) {
        loop.preconditionInEventLoop()
        connections[handler.id] = handler
        perform(state.connectionOpened(handler.id, now: MonotonicClock.seconds()))
        if let after = faults.dropAfter {
            handler.scheduleDrop(after: after)
        }
    }

    func received(_ message: CastMessage, from id: SenderConnectionID) {
        loop.preconditionInEventLoop()
        if answeredFromReplay(message, from: id) { return }
        perform(state.receive(message, from: id, now: MonotonicClock.seconds()))
    }

    func connectionClosed(_ id: SenderConnectionID) {
        loop.preconditionInEventLoop()
        guard connections.removeValue(forKey: id) != nil else { return }
        replayCursors[id] = nil
        perform(state.connectionClosed(id, now: MonotonicClock.seconds()))
    }

    /// One message's one-way delay in seconds (``latency``, jitter drawn per message). On the loop.
    func drawLatency() -> Double {
        latency.draw(&latencyRandom)
    }

    func frameLogEvent(_ name: String, connection: UInt64?, peer: String?, fields: JSONObject) {
        frameLog?.event(name, device: configuration.uuid, connection: connection, peer: peer, fields: fields)
    }


    // MARK: Outputs

    /// Carries out what the state machine decided. The messages for one connection go out with
    /// one flush after the last of them (one TLS write and one syscall for, say, the two
    /// MEDIA_STATUS a LOAD answers with), in order.
    func perform(_ outputs: [DeviceOutput]) {
        // Connections written to without a flush yet, in first-write order (usually one).
        var unflushed: [ReceiverConnectionHandler] = []
        defer { for connection in unflushed { connection.flush() } }
        for output in outputs {
            switch output {
            case .send(let message, let id):
                guard let connection = connections[id] else {
                    log.debug("reply for closed connection \(id) dropped", ["connection": .int(Int(id.rawValue))])
                    continue
                }
                if faults.replyDelay > 0 {
                    let delay = TimeAmount.seconds(clamping: faults.replyDelay)
                    loop.scheduleTask(in: delay) { connection.send(message) }
                } else {
                    connection.write(message)
                    if !unflushed.contains(where: { $0 === connection }) { unflushed.append(connection) }
                }
            case .closeConnection(let id, let reason):
                // What was written for it goes out first: a close drops unflushed writes.
                for connection in unflushed { connection.flush() }
                unflushed.removeAll()
                connections[id]?.close(reason: reason).whenComplete { _ in }
            case .advertisementChanged(let state):
                advertiser?.publish(advertisement(state))
            case .checkMedia(let request):
                checkMedia(request)
            case .mediaNotChecked(let url):
                noteMediaNotChecked(url: url)
            case .leftGroupPlayback(let groups):
                frameLogEvent("leftGroupPlayback", connection: nil, peer: nil, fields: ["groups": .array(groups.map { .string($0) })])
                coordinator?.memberLeft(self, groups: groups)
            }
        }
        reportGroupPlayback()
        recordPlaybackEvents()
        rescheduleDeadline()
    }

    /// The ground truth's changes (``PlaybackEvent``) as frame-log `playback` events: `change`
    /// and the fields of `list`'s `state.playback`, on the wall clock.
    private func recordPlaybackEvents() {
        let events = state.takePlaybackEvents()
        guard !events.isEmpty, frameLog != nil else { return }
        for event in events {
            var fields = SimulatorWallClock.json(event.truth)
            fields.set("change", .string(event.change.rawValue))
            frameLogEvent("playback", connection: nil, peer: nil, fields: fields)
        }
    }

    /// On a group endpoint: tells the coordinator when the group starts or stops playing.
    private func reportGroupPlayback() {
        guard state.groupState != nil else { return }
        let playing = state.groupPlayerState(now: MonotonicClock.seconds()) != nil
        guard playing != reportedGroupPlaying else { return }
        reportedGroupPlaying = playing
        coordinator?.groupPlaybackChanged(endpoint: self, playing: playing)
    }

    private func rescheduleDeadline() {
        let next = state.nextDeadline
        guard next != scheduledDeadline else { return }
        deadlineTask?.cancel()
        scheduledDeadline = next
        guard let next else { return }
        let delay = max(0, next - MonotonicClock.seconds())
        deadlineTask = loop.scheduleTask(in: .seconds(clamping: delay) + .milliseconds(1)) { [self] in
            scheduledDeadline = nil
            perform(state.advance(to: MonotonicClock.seconds()))
        }
    }

    /// The mDNS record for `state` (st/rs as the state machine reported them; with `--replay`,
    /// the recorded ones until the device has run an app of its own).
    func advertisement(_ state: DeviceAdvertisementState) -> MDNSAdvertisement {
        var advertisement = MDNSAdvertisement(configuration: configuration, busy: state.busy, statusText: state.statusText,
                                              appIDs: settings.catalogue.map(\.appID))
        if state.busy { ranAnApp = true }
        if let identity = settings.replay?.identity {
            advertisement.recordedTXT = identity.txt
            advertisement.recordedTXTOrder = identity.txtComplete ? identity.txtOrder : nil
            advertisement.keepsRecordedStatus = !ranAnApp
        }
        return advertisement
    }

    // MARK: Control (any thread)

    /// Runs `body` on the device's loop with access to the state machine and connections.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (SimulatedDevice) throws -> T) -> EventLoopFuture<T> {
        loop.submit { try body(self) }
    }

    var connectionHandlers: [ReceiverConnectionHandler] { Array(connections.values).sorted { $0.id < $1.id } }

    func mutateState(_ body: (inout ReceiverDevice, Double) -> [DeviceOutput]) {
        loop.preconditionInEventLoop()
        perform(body(&state, MonotonicClock.seconds()))
    }

    func readState<T>(_ body: (ReceiverDevice, Double) -> T) -> T {
        loop.preconditionInEventLoop()
        return body(state, MonotonicClock.seconds())
    }

    /// Reboot: listeners and connections go away, the state machine reboots, and after `downFor`
    /// seconds the device listens again.
    func reboot(downFor: Double) -> EventLoopFuture<Void> {
        unreachable(downFor: downFor, reboot: true)
    }

    /// Network outage: listeners and connections go away for `downFor` seconds but the device
    /// keeps its state (the app and its media go on, as when Wi-Fi drops).
    func outage(downFor: Double) -> EventLoopFuture<Void> {
        unreachable(downFor: downFor, reboot: false)
    }

    private func unreachable(downFor: Double, reboot: Bool) -> EventLoopFuture<Void> {
        loop.flatSubmit {
            let what = reboot ? "rebooting" : "network outage"
            self.log.warning("\(what): down for \(downFor) s", ["downFor": .double(downFor)])
            if reboot { self.perform(self.state.reboot(now: MonotonicClock.seconds())) }
            return self.goDown(reason: reboot ? "reboot" : "outage").map {
                self.loop.scheduleTask(in: .seconds(clamping: downFor)) {
                    self.bindAll().whenFailure { error in
                        self.log.error("could not come back after reboot: \(error)")
                    }
                }
            }
        }
    }
}
