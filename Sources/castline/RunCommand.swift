import ArgumentParser
import CastLogging
import CastPluginHost
import CastlineConfig
import CastlineDaemon
import CastNearby
import Glibc

/// `castline run --config FILE`: the daemon (see configs/castline.service).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the config's jobs as a daemon (systemd Type=notify).",
        discussion: """
            Discovers devices (plugins and the config's devices), keeps each job's media playing on the
            devices it matches, casting again as the job's recast_on and takeover say. Tells systemd
            READY=1, a STATUS= line (jobs and device states), WATCHDOG=1 at half WatchdogSec.
            SIGHUP: re-reads the config: log rules apply at once, changed jobs restart (a config with
            errors is refused with file:line:column and the previous one keeps running).
            SIGTERM/SIGINT: ends the sessions as daemon.on_stop says (leave | stop) and flushes the log sinks.
            """ + "\n" + CastlineExit.summary)

    @Option(name: .long, help: ArgumentHelp("The config file (YAML). Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?
    @Option(name: .long, help: "A folder or .so file to load plugins from (before the config's paths). Repeatable.")
    var pluginPath: [String] = []
    @Option(name: .long, help: "Log rules (override the config's logging.rules until the next SIGHUP).")
    var log: String?

    func run() async throws {
        let signals = SignalStream([SIGHUP, SIGTERM, SIGINT])
        let options = DeviceRequest(config: config, pluginPath: pluginPath, log: log)
        let environment = try CommandEnvironment(options: options, featureKinds: [.discovery, .mediaFormat], consoleMinimum: .info)
        let nearby = try Self.nearbyManager(environment)
        let announcer = nearby.map { NearbyJobAnnouncer(manager: $0, namespace: environment.config.nearby.namespace, logSystem: environment.logSystem) }
        let env = castline.environment()
        let layers = LogRuleLayers(config: environment.config.logging.rules, configSource: environment.config.file,
                                   environment: env[LogSystem.environmentVariable], commandLine: log, defaultMinimum: .info)
        let jobsFile = environment.config.daemon.jobsFile ?? NearbyPermissionStore.defaultDirectory(environment: env) + "/jobs.json"
        let daemon = Daemon(config: environment.config, providers: environment.discoveryProviders(),
                            logSystem: environment.logSystem, group: environment.group, logLayers: layers,
                            jobStore: JobStore(path: jobsFile, logSystem: environment.logSystem), announcer: announcer)
        let logger = Logger(class: "RunCommand", system: environment.logSystem)
        DescriptorLimit.raise(log: logger)
        let path = environment.config.file
        let signalTask = Task {
            for await number in signals.signals {
                if number == SIGHUP {
                    guard path != CastlineConfiguration().file else {
                        logger.warning("SIGHUP: castline runs on the built-in defaults (no config file): nothing to reload")
                        continue
                    }
                    do {
                        let (next, warnings) = try CastlineConfiguration.load(path: path)
                        for warning in warnings { logger.warning("\(warning)") }
                        await daemon.reload(next)
                    } catch {
                        logger.error("config reload refused, the previous config keeps running:\n\(error)", ["config": .string(path)])
                    }
                } else {
                    logger.info("signal \(number): stopping")
                    let stopCasting = await daemon.currentOnStop == .stop
                    await daemon.stop(stopCasting: stopCasting)
                    return
                }
            }
        }
        await daemon.run()
        signalTask.cancel()
        nearby?.close()
        await environment.shutdown()
        _ = signals
    }

    /// With `nearby.announce_jobs`: a nearby manager over avahi for the job announcements (they
    /// wait for the nearby permission; the daemon runs either way).
    static func nearbyManager(_ command: CommandEnvironment) throws -> NearbyMessagesManager? {
        let settings = command.config.nearby
        guard settings.announceJobs else { return nil }
        let directory = settings.stateDir ?? NearbyPermissionStore.defaultDirectory(environment: environment())
        let store = NearbyPermissionStore(directory: directory, logSystem: command.logSystem)
        do {
            let medium = try NearbyAvahiMedium(interfaces: settings.interfaces.isEmpty ? nil : Set(settings.interfaces),
                                               logSystem: command.logSystem)
            if !store.permission.isGranted {
                command.log.warning("nearby.announce_jobs is on but the nearby permission is \(store.permission.word) in \(directory):"
                                        + " nothing is announced until `castline nearby permission grant --state-dir \(directory)`")
            }
            return NearbyMessagesManager(media: [medium], permissions: store, logSystem: command.logSystem)
        } catch {
            command.log.error("nearby job announcements are off: \(error)")
            return nil
        }
    }
}
