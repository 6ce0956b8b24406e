import CastlineJobs
import CastlineLocalMedia
import CastCore
import CastProtocol
import CastLogging
import CastSender
import CastlineConfig
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// `castline run`, the hub: the one owner of castline's sessions. Discovery feeds the
/// ``DeviceRegistry`` (one following session per device) and a ``JobDriver`` per job; the
/// ``ControlPlane`` serves the CLI, the API and bridges on top of them; systemd hears READY,
/// STATUS, WATCHDOG, RELOADING and STOPPING. Isolation: an actor; `run()` returns when `stop`
/// is called.
package actor Daemon {
    package nonisolated let events: HubEvents
    package nonisolated let registry: DeviceRegistry
    /// What castline knows of each device's field behaviour (profiles, the config, what was learned).
    package nonisolated let field: FieldKnowledgeBook
    /// What the video walls learned of each TV's start latency.
    package nonisolated let syncCalibration: SyncCalibrationStore
    package nonisolated let metrics: HubMetrics
    /// Per-device reconnects, launches and last seen for `/metrics`, fed by ``events``.
    package nonisolated let deviceMetrics: DeviceMetrics
    /// The sessions' options, event loops and managers: the one place the hub's sessions and
    /// discovery are put together (a command's own hub too).
    package nonisolated let context: CastContext
    /// Channel plugins opened on devices, for commands and jobs alike.
    package nonisolated let pluginChannels: PluginChannels
    /// The local files casts serve, and which may be served (`media.roots`).
    package nonisolated let media: MediaPublisher
    let logSystem: LogSystem
    let group: EventLoopGroup
    let notifier: SystemdNotifier
    let log: Logger
    let providers: [any DiscoveryProvider]
    let announcer: NearbyJobAnnouncer?
    let hostName: String
    let jobStore: JobStore?
    var config: CastlineConfiguration
    package internal(set) var logLayers: LogRuleLayers
    /// Jobs by name: the config's, then those added through the API.
    var drivers: [String: JobDriver] = [:]
    /// Jobs with `sync: true`: video walls instead of a driver per device.
    var wallJobs: [String: WallJob] = [:]
    var apiJobs: [String: JobEntry] = [:]
    var discoveryTask: Task<Void, Never>?
    var lastStatus = ""
    var lastWatchdog = 0.0
    var running = false
    var finished: AsyncStream<Void>.Continuation?
    /// The control plane announce jobs run through at their times (``attach(_:)``).
    weak var plane: ControlPlane?
    package nonisolated let startedAt = MonotonicClock.seconds()

    /// `providers`: the discovery plugin providers the config lets run (filtered by the caller,
    /// which knows their plugin ids); the config's static devices are added here.
    /// `announcer`: publishes the job states as nearby messages (config `nearby.announce_jobs`).
    /// `jobStore`: where API jobs are kept (nil: they last until the process ends).
    package init(config: CastlineConfiguration, providers: [any DiscoveryProvider], logSystem: LogSystem, group: EventLoopGroup,
                logLayers: LogRuleLayers, jobStore: JobStore?, notifier: SystemdNotifier = SystemdNotifier(),
                announcer: NearbyJobAnnouncer? = nil, plugins: (any ChannelPlugins)? = nil, linkRetryDelay: Double? = 10,
                localMedia: LocalMediaPolicy? = nil, mediaPorts: ClosedRange<Int>? = nil, fieldLearnedFile: String? = nil,
                syncCalibrationFile: String? = nil) {
        syncCalibration = SyncCalibrationStore(path: syncCalibrationFile, logSystem: logSystem)
        self.config = config
        field = FieldKnowledgeBook(settings: config.daemon, path: fieldLearnedFile, logSystem: logSystem)
        self.announcer = announcer
        var buffer = [CChar](repeating: 0, count: 256)
        hostName = gethostname(&buffer, buffer.count - 1) == 0
            ? String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        self.providers = providers
        self.logSystem = logSystem
        self.group = group
        self.notifier = notifier
        self.logLayers = logLayers
        self.jobStore = jobStore
        pluginChannels = PluginChannels(plugins: plugins)
        log = Logger(class: "Daemon", system: logSystem)
        let deviceMetrics = DeviceMetrics()
        self.deviceMetrics = deviceMetrics
        events = HubEvents(tap: { deviceMetrics.note(kind: $0, type: $1, device: $2, fields: $3, time: $4) })
        metrics = HubMetrics()
        var options = Self.castOptions(config, logSystem: logSystem)
        options.requestObserver = metrics.requestObserver
        options.joinPolicy = .follow
        options.sessionResumeFile = nil   // a following session finds its app again by looking
        context = CastContext(options: options, group: group)
        media = MediaPublisher(policy: localMedia ?? LocalMediaPolicy(roots: config.media.roots), ports: mediaPorts ?? config.media.ports,
                               group: group, logSystem: logSystem)
        registry = DeviceRegistry(context: context, events: events, metrics: metrics, aliases: Self.aliases(config),
                                  retryDelay: linkRetryDelay, media: media, field: field)
    }

    /// Session options from the config (the same mapping `cast` uses).
    package static func castOptions(_ config: CastlineConfiguration, logSystem: LogSystem) -> CastOptions {
        var options = CastOptions(receiverAppID: config.receiverAppID)
        options.logSystem = logSystem
        if let sender = config.senderID { options.senderID = sender }
        options.heartbeatInterval = config.session.heartbeatInterval
        options.heartbeatTimeout = config.session.heartbeatTimeout
        options.connectTimeout = config.session.connectTimeout
        options.requestTimeout = config.session.requestTimeout
        options.reconnectPolicy = ReconnectPolicy(initialDelay: config.session.reconnectInitialDelay,
                                                  maxDelay: config.session.reconnectMaxDelay,
                                                  maxAttempts: config.session.reconnectMaxAttempts)
        options.sessionResumeFile = config.session.resumeFile
        switch config.session.deviceAuth {
        case .off: options.deviceAuth = .off
        case .warn: options.deviceAuth = .warn
        case .require: options.deviceAuth = .require
        }
        return options
    }

    static func aliases(_ config: CastlineConfiguration) -> [String: [String]] {
        Dictionary(config.devices.map { ("\($0.host):\($0.port)", $0.aliases) }, uniquingKeysWith: { a, _ in a })
    }

    // MARK: Running

    /// Starts discovery and the jobs, tells systemd READY, and runs until ``stop(stopCasting:)``.
    package func run() async {
        let (done, continuation) = AsyncStream<Void>.makeStream()
        finished = continuation
        running = true
        for job in jobStore?.load() ?? [] where !config.jobs.contains(where: { $0.name == job.name }) { apiJobs[job.name] = job }
        let manager = context.discoveryManager
        for provider in providers { await manager.add(provider) }
        if let staticHosts = staticProvider(config) { await manager.add(staticHosts) }
        for job in allJobs { startDriver(job) }
        let discovery = manager.events()
        await manager.start()
        discoveryTask = Task { [weak self] in
            for await event in discovery {
                await self?.handle(event)
                if case .stopped = event { break }
            }
        }
        let ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self, await self.running else { return }
                await self.tick()
            }
        }
        // Reconnects free memory glibc keeps resident until told (``ProcessMemory``).
        let trimmer = ProcessMemory.trimPeriodically(logSystem: logSystem)
        let status = await statusLine()
        notifier.ready(status: status)
        log.info("running: \(status)", ["jobs": .int(drivers.count), "config": .string(config.file)])
        for await _ in done { break }
        ticker.cancel()
        trimmer.cancel()
    }

    /// The config's static devices as a discovery provider (nil when there are none, or the
    /// config does not allow the `static` provider).
    func staticProvider(_ config: CastlineConfiguration) -> StaticHostProvider? {
        let hosts = config.devices.map { StaticHostProvider.Host(host: $0.host, port: $0.port, name: $0.name, id: $0.id, model: $0.model) }
        guard !hosts.isEmpty, config.discovery.allows(["static"]) else { return nil }
        // The daemon probes an unreachable host every 2 s (a TV switched on, or one that failed a
        // re-probe, is listed again at once) and a listed one every 15 s, unless its session is
        // connected (the session's heartbeat watches it then). Each failed probe is a debug
        // record: the noise is one warning per change and a summary every 5 min.
        let connected = registry.connectedIDs
        return StaticHostProvider(hosts: hosts, retryInterval: 2, recheckInterval: 15, isConnected: { connected.contains($0) },
                                  group: group, logSystem: logSystem)
    }

    var allJobs: [JobEntry] { config.jobs + apiJobs.values.sorted { $0.name < $1.name } }

    /// Which local files a job may serve: a config file's job any the process can read unless
    /// `media.roots` is set; an API job only what `media.roots` allows, like every command.
    func mediaPolicy(forJob name: String) -> LocalMediaPolicy {
        let fromConfig = config.jobs.contains { $0.name == name } && apiJobs[name] == nil
        return fromConfig && config.media.roots.isEmpty ? .anywhere : media.policy
    }

    func startDriver(_ job: JobEntry) {
        if job.sync {
            wallJobs[job.name] = WallJob(job: job, registry: registry, logSystem: logSystem)
            return
        }
        drivers[job.name] = JobDriver(job: job, registry: registry, events: events, defaultAppID: config.receiverAppID, group: group,
                                      logSystem: logSystem, media: media, mediaPolicy: mediaPolicy(forJob: job.name),
                                      pluginChannels: pluginChannels, field: field,
                                      announcementRunner: { [weak self] name in await self?.runAnnouncement(name) ?? .null })
    }

    /// The control plane whose commands this hub serves: announce jobs run through it at their times.
    package func attach(_ plane: ControlPlane) { self.plane = plane }

    package func driver(named name: String) -> JobDriver? { drivers[name] }

    /// An announce job's timed run, through the control plane like a run from the API.
    func runAnnouncement(_ name: String) async -> JSONValue {
        guard let plane else {
            log.error("announce job \(name) is due but no control plane serves this hub", ["job": .string(name)])
            return ["error": "no control plane"]
        }
        switch await plane.execute(.runJob(name, wait: true)) {
        case .success(let answer): return answer
        case .failure(let error):
            log.warning("announce job \(name): \(error.message)", ["job": .string(name), "error": .string(error.code)])
            return ["error": .string(error.message), "code": .string(error.code)]
        }
    }

    func handle(_ event: DiscoveryEvent) async {
        // Once stopping, discovery's events are not acted on: its own stop reports every device
        // removed, and a consumer busy with an earlier event when it was cancelled still gets
        // what the stream had buffered (an AsyncStream delivers its buffer before it ends).
        guard running else { return }
        switch event {
        case .inserted(let device, _), .updated(let device, _):
            await registry.deviceFound(device)
            let aliases = await registry.entry(device.id)?.aliases ?? []
            for driver in drivers.values { await driver.deviceFound(device, aliases: aliases) }
        case .removed(let device):
            await registry.deviceLost(device.id)
            for driver in drivers.values { await driver.deviceLost(device.id) }
        default:
            // A provider's problem is logged once per change by the DiscoveryManager.
            break
        }
    }

    func tick() async {
        for driver in drivers.values { await driver.tick() }
        for wall in wallJobs.values { await wall.tick(plane: plane) }
        if let announcer { announcer.update(await announcements()) }
        let status = await statusLine()
        if status != lastStatus {
            lastStatus = status
            notifier.status(status)
        }
        if let interval = notifier.watchdogInterval {
            let now = MonotonicClock.seconds()
            if now - lastWatchdog >= interval / 2 {
                lastWatchdog = now
                notifier.watchdog()
            }
        }
    }

    /// `2 job(s): 3 playing, 1 yielding` — the systemd STATUS line.
    package func statusLine() async -> String {
        var counts: [String: Int] = [:]
        for driver in drivers.values {
            for entry in await driver.summary { counts[entry.state.description, default: 0] += 1 }
        }
        let states = counts.keys.sorted().map { "\(counts[$0]!) \($0)" }
        // The devices the hub sees, whether or not a job matches them.
        let all = await registry.all
        let connected = all.filter { registry.connectedIDs.contains($0.device.id) }.count
        let devices = all.isEmpty ? "no device yet" : "\(all.count) device(s), \(connected) connected"
        return "\(drivers.count) job(s)" + (states.isEmpty ? "" : ": " + states.joined(separator: ", ")) + "; " + devices
    }

    /// Each job's state on each of its devices, as nearby announcements.
    package func announcements() async -> [JobAnnouncement] {
        var result: [JobAnnouncement] = []
        for driver in drivers.values {
            for entry in await driver.summary {
                result.append(JobAnnouncement(host: hostName, job: driver.job.name, device: entry.device, state: entry.state.description,
                                              title: driver.job.media.title, url: driver.job.media.url))
            }
        }
        return result
    }

    /// What SIGTERM does, from the current config.
    package var currentOnStop: DaemonSettings.OnStop { config.daemon.onStop }

    /// Per-job, per-device states (for logs and tests).
    package func jobStates() async -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (name, driver) in drivers {
            result[name] = Dictionary(await driver.summary.map { ($0.device, $0.state.description) }, uniquingKeysWith: { a, _ in a })
        }
        return result
    }

    // MARK: Stopping

    /// Ends the jobs and the device links and stops discovery, then ends ``run()``. With
    /// `stopCasting`, castline's own casts stop (the jobs' and the commands'), never another
    /// sender's media, nor media a job was yielding to.
    package func stop(stopCasting: Bool) async {
        guard running else { return }
        running = false
        notifier.stopping(stopCasting ? "stopping: ending castline's casts" : "stopping: leaving casts running")
        log.info("stopping (\(stopCasting ? "stop castline's casts" : "leave casts running"))", ["stopCasting": .bool(stopCasting)])
        // Discovery's own stop reports every device removed: `handle` ignores it (running is false).
        discoveryTask?.cancel()
        for driver in drivers.values { await driver.stop(stopCasting: stopCasting) }
        for wall in wallJobs.values { await wall.stop(plane: plane, stopCasting: stopCasting) }
        var commandCasts: Set<String> = []
        if stopCasting {
            for entry in await registry.all where CommandOwner.isCommand(entry.owner) { commandCasts.insert(entry.device.id) }
        }
        await registry.shutdown(stopping: commandCasts)
        announcer?.stop()
        await context.discoveryManager.stop()
        finished?.yield()
        finished?.finish()
    }
}
