import CastCore
import CastProtocol
import CastLogging
import CastMediaServer
import CastSender
import CastlineConfig
import NIOCore

/// Runs one config job: a ``JobStateMachine`` per matching device, fed by discovery, session
/// and media events and a 1 s tick, and the actions carried out with the sender framework.
/// Isolation: an actor; sessions and watchers live here.
public actor JobDriver {
    public nonisolated let job: JobEntry
    let manager: SessionManager
    let probeManager: SessionManager
    let group: EventLoopGroup
    let logSystem: LogSystem
    let log: Logger
    let selectors: [DeviceSelector]
    let aliases: [String: [String]]
    var machines: [String: JobStateMachine] = [:]
    var devices: [String: CastDevice] = [:]
    var sessions: [String: CastSession] = [:]
    var watchers: [String: [Task<Void, Never>]] = [:]
    var servers: [String: MediaFileServer] = [:]
    var stopped = false

    /// `options` carries the app (the job's `app_id` or the config's) and session settings.
    public init(job: JobEntry, options: CastOptions, group: EventLoopGroup, aliases: [String: [String]]) {
        self.job = job
        self.group = group
        self.logSystem = options.logSystem
        self.aliases = aliases
        var appOptions = options
        if let app = job.appID { appOptions.receiverAppID = app }
        appOptions.joinPolicy = .joinOrLaunch
        manager = SessionManager(options: appOptions, group: group)
        var probeOptions = options
        probeOptions.joinPolicy = .joinAnyMediaApp
        probeOptions.reconnectPolicy = .never
        probeOptions.sessionResumeFile = nil
        probeManager = SessionManager(options: probeOptions, group: group)
        log = Logger(class: "JobDriver", system: options.logSystem).with(["job": .string(job.name)])
        selectors = job.devices.compactMap { try? DeviceSelector($0) }
    }

    /// Whether `device` is one of this job's.
    public nonisolated func matches(_ device: CastDevice, aliases: [String]) -> Bool {
        let selectors = job.devices.compactMap { try? DeviceSelector($0) }
        return selectors.contains { $0.matches(name: device.friendlyName, id: device.id, aliases: aliases) }
    }

    /// Per device: state name, casts, last reason (for STATUS= and logs).
    public var summary: [(device: String, state: JobStateMachine.State, casts: Int)] {
        machines.keys.sorted().map { id in (devices[id]?.friendlyName ?? id, machines[id]!.state, machines[id]!.casts) }
    }

    public func deviceFound(_ device: CastDevice) {
        guard !stopped, matches(device, aliases: aliases["\(device.host):\(device.port)"] ?? []) else { return }
        let known = devices[device.id] != nil
        devices[device.id] = device
        if machines[device.id] == nil { machines[device.id] = JobStateMachine(job: job) }
        if !known { log.info("device \(device.friendlyName) matches", ["device": .string(device.id), "deviceName": .string(device.friendlyName)]) }
        feed(device.id, .deviceFound)
    }

    public func deviceLost(_ id: String) {
        guard machines[id] != nil else { return }
        log.info("device \(devices[id]?.friendlyName ?? id) lost", ["device": .string(id)])
        feed(id, .deviceLost)
    }

    public func tick() {
        guard !stopped else { return }
        for id in machines.keys.sorted() { feed(id, .tick) }
    }

    /// Ends every session (`stopCasting`: stop the receiver apps) and stops serving files.
    public func stop(stopCasting: Bool) async {
        stopped = true
        for tasks in watchers.values { for task in tasks { task.cancel() } }
        watchers = [:]
        await manager.shutdown(stopCasting: stopCasting)
        await probeManager.shutdown()
        for server in servers.values { await server.stop() }
        servers = [:]
        sessions = [:]
    }

    // MARK: Machine

    func feed(_ id: String, _ input: JobStateMachine.Input) {
        guard !stopped, var machine = machines[id] else { return }
        let before = machine.state
        let actions = machine.handle(input, now: MonotonicClock.seconds())
        machines[id] = machine
        if machine.state != before {
            log.info("\(devices[id]?.friendlyName ?? id): \(before) → \(machine.state)", [
                "device": .string(id), "from": .string(before.description), "to": .string(machine.state.description),
                "input": .string(Self.name(input)),
            ])
        }
        for action in actions { perform(action, on: id) }
    }

    static func name(_ input: JobStateMachine.Input) -> String {
        switch input {
        case .deviceFound: return "deviceFound"
        case .deviceLost: return "deviceLost"
        case .castSucceeded: return "castSucceeded"
        case .castFailed: return "castFailed"
        case .media: return "media"
        case .sessionEnded: return "sessionEnded"
        case .deviceBusy: return "deviceBusy"
        case .tick: return "tick"
        }
    }

    func perform(_ action: JobStateMachine.Action, on id: String) {
        switch action {
        case .cast(let reason):
            Task { await self.cast(id, reason: reason) }
        case .endSession:
            let session = sessions.removeValue(forKey: id)
            for task in watchers.removeValue(forKey: id) ?? [] { task.cancel() }
            Task { await session?.end(stopCasting: false) }
        case .checkStatus:
            guard let session = sessions[id] else { return }
            Task { _ = await session.remoteMediaClient.requestStatus().result }
        case .probeDevice:
            Task { await self.probe(id) }
        }
    }

    // MARK: Actions

    func cast(_ id: String, reason: String) async {
        guard let device = devices[id] else { return }
        log.info("casting to \(device.friendlyName): \(reason)", ["device": .string(id), "reason": .string(reason), "url": .string(job.media.url)])
        let session: CastSession
        do {
            session = try await manager.startSession(on: device)
        } catch {
            log.warning("cannot start a session on \(device.friendlyName): \(error)", ["device": .string(id), "error": .string(error.name)])
            feed(id, .castFailed("\(error)"))
            return
        }
        if sessions[id] !== session { watch(session, id: id) }
        let url: String
        do { url = try await mediaURL(for: device) } catch {
            log.error("cannot serve \(job.media.url) to \(device.friendlyName): \(error)", ["device": .string(id)])
            feed(id, .castFailed("\(error)"))
            return
        }
        switch await session.remoteMediaClient.loadAndWait(JobMedia.information(job.media, url: url),
                                                           options: MediaLoadOptions(autoplay: job.media.autoplay),
                                                           until: job.media.autoplay ? .playing : .paused, timeout: 30) {
        case .success:
            log.info("\(device.friendlyName): playing \(job.media.url)", ["device": .string(id), "url": .string(job.media.url)])
            feed(id, .castSucceeded)
        case .failure(let error):
            log.warning("\(device.friendlyName): cast failed: \(error)", ["device": .string(id), "error": .string("\(error)")])
            feed(id, .castFailed("\(error)"))
        }
    }

    /// Session end and media status → machine inputs, for as long as the session lives.
    func watch(_ session: CastSession, id: String) {
        for task in watchers[id] ?? [] { task.cancel() }
        sessions[id] = session
        let updates = session.updates()
        let media = session.remoteMediaClient.statusUpdates()
        let ended = Task { [weak self] in
            for await update in updates {
                guard case .event(.didEnd(let error), _) = update else { continue }
                await self?.sessionEnded(session, id: id, error: error)
                return
            }
        }
        let statuses = Task { [weak self] in
            for await status in media {
                guard await session.state == .connected else { continue }
                await self?.mediaStatus(status, session: session, id: id)
            }
        }
        watchers[id] = [ended, statuses]
    }

    func sessionEnded(_ session: CastSession, id: String, error: CastSessionError?) {
        guard sessions[id] === session else { return }
        sessions[id] = nil
        feed(id, .sessionEnded(JobMedia.sessionEnd(error)))
    }

    func mediaStatus(_ status: MediaStatus?, session: CastSession, id: String) {
        guard sessions[id] === session else { return }
        let urls = [job.media.url] + servers.values.map { $0.url(for: JobMedia.fileName(job.media.url)) }
        feed(id, .media(status.map { JobMedia.observation($0, urls: urls) }))
    }

    /// While yielding: is another sender's media still playing there?
    func probe(_ id: String) async {
        guard let device = devices[id] else { return }
        let busy: Bool
        do {
            let session = try await probeManager.startSession(on: device)
            let state = session.remoteMediaClient.mediaStatus?.effectivePlayerState
            busy = state == .playing || state == .buffering || state == .paused || state == .loading
            await session.end(stopCasting: false)
        } catch {
            busy = { if case .appNotRunning = error { return false } else { return true } }()
        }
        feed(id, .deviceBusy(busy))
    }

    /// The URL to load: the job's URL, or for a file the built-in server's URL on the address
    /// that faces the device.
    func mediaURL(for device: CastDevice) async throws -> String {
        guard job.media.url.hasPrefix("/") else { return job.media.url }
        let address = try FacingAddress.localAddress(facing: device.host, port: device.port)
        if servers[address] == nil {
            servers[address] = try await MediaFileServer.start(
                file: ServedFile(path: job.media.url, contentType: job.media.contentType ?? "application/octet-stream"),
                host: address, group: group, logSystem: logSystem)
        }
        return servers[address]!.url(for: JobMedia.fileName(job.media.url))
    }
}
