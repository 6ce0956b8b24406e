import CastCore
import CastProtocol
import CastLogging
import CastSender
import CastlineConfig
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// `castline run`: discovery feeding one ``JobDriver`` per config job, a 1 s tick, systemd
/// notifications (READY, STATUS, WATCHDOG, RELOADING, STOPPING) and config reloads.
/// Isolation: an actor; `run()` returns when `stop` is called.
public actor Daemon {
    let logSystem: LogSystem
    let group: EventLoopGroup
    let notifier: SystemdNotifier
    let log: Logger
    let providers: [any DiscoveryProvider]
    var config: CastlineConfiguration
    var drivers: [JobDriver] = []
    var manager: DiscoveryManager?
    var lastStatus = ""
    var lastWatchdog = 0.0
    var running = false
    var finished: AsyncStream<Void>.Continuation?
    let announcer: NearbyJobAnnouncer?
    let hostName: String

    /// `providers`: the discovery plugin providers the config lets run (filtered by the caller,
    /// which knows their plugin ids); the config's static devices are added here.
    /// `announcer`: publishes the job states as nearby messages (config `nearby.announce_jobs`).
    public init(config: CastlineConfiguration, providers: [any DiscoveryProvider], logSystem: LogSystem, group: EventLoopGroup,
                notifier: SystemdNotifier = SystemdNotifier(), announcer: NearbyJobAnnouncer? = nil) {
        self.config = config
        self.announcer = announcer
        var buffer = [CChar](repeating: 0, count: 256)
        hostName = gethostname(&buffer, buffer.count - 1) == 0
            ? String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        self.providers = providers
        self.logSystem = logSystem
        self.group = group
        self.notifier = notifier
        log = Logger(class: "Daemon", system: logSystem)
    }

    /// Session options from the config (the same mapping `cast` uses).
    public static func castOptions(_ config: CastlineConfiguration, logSystem: LogSystem) -> CastOptions {
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

    /// Starts discovery and the jobs, tells systemd READY, and runs until ``stop(stopCasting:)``.
    public func run() async {
        let (done, continuation) = AsyncStream<Void>.makeStream()
        finished = continuation
        running = true
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(), logSystem: logSystem)
        self.manager = manager
        for provider in providers { await manager.add(provider) }
        let hosts = config.devices.map { StaticHostProvider.Host(host: $0.host, port: $0.port, name: $0.name, id: $0.id) }
        if !hosts.isEmpty, config.discovery.allows(["static"]) {
            await manager.add(StaticHostProvider(hosts: hosts, retryInterval: 2, recheckInterval: 15, group: group, logSystem: logSystem))
        }
        startDrivers()
        let events = manager.events()
        await manager.start()
        let eventTask = Task { [weak self] in
            for await event in events {
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
        let status = await statusLine()
        notifier.ready(status: status)
        log.info("running: \(status)", ["jobs": .int(drivers.count), "config": .string(config.file)])
        for await _ in done { break }
        ticker.cancel()
        eventTask.cancel()
    }

    func startDrivers() {
        let options = Self.castOptions(config, logSystem: logSystem)
        let aliases = Dictionary(config.devices.map { ("\($0.host):\($0.port)", $0.aliases) }, uniquingKeysWith: { a, _ in a })
        drivers = config.jobs.map { JobDriver(job: $0, options: options, group: group, aliases: aliases) }
    }

    func handle(_ event: DiscoveryEvent) async {
        switch event {
        case .inserted(let device, _), .updated(let device, _):
            for driver in drivers { await driver.deviceFound(device) }
        case .removed(let device):
            for driver in drivers { await driver.deviceLost(device.id) }
        case .problem(let provider, let reason?):
            log.warning("discovery provider \(provider): \(reason)", ["provider": .string(provider)])
        default:
            break
        }
    }

    func tick() async {
        for driver in drivers { await driver.tick() }
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

    /// `2 job(s): 3 playing, 1 yielding, 0 waiting` — the systemd STATUS line.
    public func statusLine() async -> String {
        var counts: [String: Int] = [:]
        for driver in drivers {
            for entry in await driver.summary { counts[entry.state.description, default: 0] += 1 }
        }
        let states = counts.keys.sorted().map { "\(counts[$0]!) \($0)" }
        return "\(drivers.count) job(s)" + (states.isEmpty ? ", no device yet" : ": " + states.joined(separator: ", "))
    }

    /// Each job's state on each of its devices, as nearby announcements.
    public func announcements() async -> [JobAnnouncement] {
        var result: [JobAnnouncement] = []
        for driver in drivers {
            for entry in await driver.summary {
                result.append(JobAnnouncement(host: hostName, job: driver.job.name, device: entry.device, state: entry.state.description,
                                              title: driver.job.media.title, url: driver.job.media.url))
            }
        }
        return result
    }

    /// What SIGTERM does, from the current config.
    public var currentOnStop: DaemonSettings.OnStop { config.daemon.onStop }

    /// Per-job, per-device states (for logs and tests).
    public func jobStates() async -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for driver in drivers {
            result[driver.job.name] = Dictionary(await driver.summary.map { ($0.device, $0.state.description) }, uniquingKeysWith: { a, _ in a })
        }
        return result
    }

    /// Applies a new config: log rules at once; jobs that changed are restarted, others keep
    /// their sessions. Discovery providers and plugins stay as they are (restart for those).
    public func reload(_ new: CastlineConfiguration) async {
        notifier.reloading()
        if let rules = new.logging.rules {
            try? logSystem.applyRules(rules, source: new.file)
        }
        let old = Dictionary(drivers.map { ($0.job.name, $0) }, uniquingKeysWith: { a, _ in a })
        let options = Self.castOptions(new, logSystem: logSystem)
        let aliases = Dictionary(new.devices.map { ("\($0.host):\($0.port)", $0.aliases) }, uniquingKeysWith: { a, _ in a })
        var next: [JobDriver] = []
        var changed = 0
        for job in new.jobs {
            if let driver = old[job.name], Self.same(driver.job, job) {
                next.append(driver)
            } else {
                next.append(JobDriver(job: job, options: options, group: group, aliases: aliases))
                changed += 1
            }
        }
        let kept = Set(next.map { ObjectIdentifier($0) })
        for driver in drivers where !kept.contains(ObjectIdentifier(driver)) { await driver.stop(stopCasting: false) }
        drivers = next
        config = new
        if let manager {
            for device in await manager.devices {
                for driver in drivers { await driver.deviceFound(device) }
            }
        }
        let status = await statusLine()
        log.info("config reloaded from \(new.file): \(changed) job(s) started or restarted; \(status)", ["config": .string(new.file)])
        notifier.reloaded(status: status)
    }

    static func same(_ a: JobEntry, _ b: JobEntry) -> Bool {
        var a = a, b = b
        a.mark = SourceMark(line: 0, column: 0)
        b.mark = a.mark
        return a == b
    }

    /// Ends the jobs (`stopCasting`: stop the receiver apps, else leave them running), stops
    /// discovery and ends ``run()``.
    public func stop(stopCasting: Bool) async {
        guard running else { return }
        running = false
        notifier.stopping(stopCasting ? "stopping: ending casts" : "stopping: leaving casts running")
        log.info("stopping (\(stopCasting ? "stop casting" : "leave casts running"))", ["stopCasting": .bool(stopCasting)])
        for driver in drivers { await driver.stop(stopCasting: stopCasting) }
        announcer?.stop()
        await manager?.stop()
        finished?.yield()
        finished?.finish()
    }
}
