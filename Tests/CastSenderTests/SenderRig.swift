import CastCore
import CastLogging
import CastReceiverSim
import CastReceiverSimServer
import CastSender
import CastTestSupport
import NIOPosix
import Synchronization
import SystemCrypto
import Testing

/// A simulator plus a session manager for sender tests over real loopback TLS: devices on free
/// ports without mDNS, a Default Media Receiver plus an echo app, a 4K HDR and a broken media rule,
/// and a private log system whose records the tests can read.
struct SenderRig {
    static let echoAppID = "CA57EC40"
    /// One CA for every simulator (RSA key generation is the slow part of a start).
    static let authority = TestAuthority.main
    static let echoNamespace: CastNamespace = "urn:x-cast:com.castline.test.echo"

    let simulator: ReceiverSimulator
    let group: MultiThreadedEventLoopGroup
    let logs: MemoryLogSink
    let logSystem: LogSystem
    /// What ``stop()`` runs first, newest first: the managers the rig made, and what a test adds.
    private let cleanups = CleanupList()

    static func start(count: Int = 1, groups: [SimulatedGroupConfiguration] = [],
                      _ adjust: (inout SimulatorSettings) -> Void = { _ in }) async throws -> SenderRig {
        var settings = SimulatorSettings()
        settings.advertise = false
        settings.threads = 1
        settings.timing = PlaybackTiming(bufferingDelay: 0.05)
        settings.authority = authority
        settings.apps = [AppDefinition(appID: echoAppID, displayName: "castline echo", namespaces: [echoNamespace, .media])]
        settings.mediaRules = [
            MediaRule(contentIdGlob: "*uhd-hdr*", videoInfo: VideoInfo(width: 3840, height: 2160, hdrType: .hdr), duration: 600),
            MediaRule(contentIdGlob: "*broken*", loadError: .mediaSrcNotSupported),
        ]
        adjust(&settings)
        let simulator = try await ReceiverSimulator.startOnFreePorts(count: count, groups: groups, settings: settings,
                                                                        logSystem: LogSystem())
        let (logSystem, logs) = try MemoryLogSink.makeSystem("", minimum: .debug)
        return SenderRig(simulator: simulator, group: MultiThreadedEventLoopGroup(numberOfThreads: 1), logs: logs, logSystem: logSystem)
    }

    /// The records logged so far, sinks flushed first (each sink writes on a worker thread of its own).
    var logRecords: [LogRecord] {
        _ = logSystem.flush()
        return logs.records
    }

    func device(_ index: Int = 0) -> CastDevice {
        let c = simulator.devices[index].configuration
        return CastDevice(id: c.uuid, friendlyName: c.name, host: c.address, port: c.castPort)
    }

    func options(appID: String = "CC1AD845", _ adjust: (inout CastOptions) -> Void = { _ in }) -> CastOptions {
        var options = CastOptions(receiverAppID: appID)
        options.logSystem = logSystem
        options.requestTimeout = 5
        adjust(&options)
        return options
    }

    func manager(appID: String = "CC1AD845", _ adjust: (inout CastOptions) -> Void = { _ in }) -> SessionManager {
        let manager = SessionManager(options: options(appID: appID, adjust), group: group)
        atStop { await manager.shutdown() }
        return manager
    }

    /// A discovery manager that ``stop()`` stops (its providers probe on the rig's loops).
    func discoveryManager(criteria: DiscoveryCriteria) -> DiscoveryManager {
        let manager = DiscoveryManager(criteria: criteria, logSystem: logSystem)
        atStop { await manager.stop() }
        return manager
    }

    /// Runs `body` when the rig stops, before the simulator and the event loops (so a test that
    /// ends early, on a failed `#require`, leaves nothing running on loops that are gone).
    func atStop(_ body: @escaping @Sendable () async -> Void) {
        cleanups.list.withLock { $0.append(body) }
    }

    /// The simulator's view of device `index` (control `list`).
    func state(_ index: Int = 0) async throws -> JSONValue {
        let reply = try await simulator.control.execute(["command": "list", "device": .int(Int64(index))]).get()
        return reply["devices"]?[0]?["state"] ?? .null
    }

    @discardableResult
    func control(_ command: JSONValue) async throws -> JSONValue {
        let reply = try await simulator.control.execute(command).get()
        #expect(reply["ok"] == true, "control \(command.serialized()) → \(reply.serialized())")
        return reply
    }

    /// Ends what a test left running (the sessions of a test whose `#require` failed midway, say),
    /// then stops the simulator and the event loops. In that order: a session still running when
    /// its devices go reconnects, and a connect on a loop that has shut down is work NIO drops
    /// (a crash under SWIFTNIO_STRICT, as `make test` runs). Only the first call does anything (a
    /// test may stop its rig itself, inside ``withSenderRig(count:settings:_:)``).
    func stop() async {
        guard cleanups.firstStop.claim() else { return }
        for cleanup in cleanups.list.withLock({ $0 }).reversed() { await cleanup() }
        await simulator.stop()
        try? await group.shutdownGracefully()
    }
}

/// Starts a ``SenderRig``, runs `body` with it and awaits ``SenderRig/stop()`` afterwards, also
/// when `body` throws (a failed `#require`).
func withSenderRig(count: Int = 1, settings adjust: (inout SimulatorSettings) -> Void = { _ in },
                   _ body: (SenderRig) async throws -> Void) async throws {
    try await withTeardown(try await SenderRig.start(count: count, adjust), { await $0.stop() }, body: body)
}

/// A rig's cleanups (a class: the rig is a value, copied into tests and tasks).
private final class CleanupList: Sendable {
    let list = Mutex<[@Sendable () async -> Void]>([])
    let firstStop = FirstCall()
}

/// Records session events in order (a listener, as an app would register one).
final class EventRecorder: CastSessionListener, RemoteMediaClientListener {
    private let recorded = Mutex<[CastSessionEvent]>([])
    private let statuses = Mutex<[MediaStatus?]>([])
    private let deviceStatuses = Mutex<[CastDeviceStatus]>([])

    var events: [CastSessionEvent] { recorded.withLock { $0 } }
    var names: [String] { events.map(\.name) }
    var mediaStatuses: [MediaStatus?] { statuses.withLock { $0 } }
    var deviceStatusList: [CastDeviceStatus] { deviceStatuses.withLock { $0 } }

    func sessionWillStart(_ session: CastSession) { record(.willStart) }
    func sessionDidStart(_ session: CastSession) { record(.didStart) }
    func session(_ session: CastSession, didFailToStartWith error: CastSessionError) { record(.didFailToStart(error)) }
    func session(_ session: CastSession, didSuspendWith reason: SuspendReason) { record(.didSuspend(reason)) }
    func sessionWillResume(_ session: CastSession) { record(.willResume) }
    func session(_ session: CastSession, didResumeOn device: CastDevice, transferred: Bool) { record(.didResume(transferred: transferred)) }
    func sessionWillEnd(_ session: CastSession) { record(.willEnd) }
    func session(_ session: CastSession, didEndWith error: CastSessionError?) { record(.didEnd(error)) }
    func session(_ session: CastSession, didReceiveDeviceStatus status: CastDeviceStatus) {
        deviceStatuses.withLock { $0.append(status) }
    }
    func remoteMediaClient(_ client: RemoteMediaClient, didUpdate status: MediaStatus?) {
        statuses.withLock { $0.append(status) }
    }

    private func record(_ event: CastSessionEvent) { recorded.withLock { $0.append(event) } }

    /// Waits (bounded) until `predicate` holds for the recorded events.
    func wait(timeout: Double = 10, until predicate: ([CastSessionEvent]) -> Bool) async -> Bool {
        await pollUntil(timeout: timeout, every: .milliseconds(20)) { predicate(events) }
    }
}

/// Waits (bounded) for a media status matching `predicate` on `client`.
func waitForMediaStatus(_ client: RemoteMediaClient, timeout: Double = 10,
                        _ predicate: @escaping @Sendable (MediaStatus) -> Bool) async -> MediaStatus? {
    if let status = client.mediaStatus, predicate(status) { return status }
    let stream = client.statusUpdates()
    if let status = client.mediaStatus, predicate(status) { return status }
    return await stream.first(within: timeout) { $0.map(predicate) ?? false } ?? nil
}
