import ArgumentParser
import CastLogging
import CastPluginHost
import CastlineConfig
import CastlineDaemon
import CastNearby
import CastlineAPI
import Glibc
import NIOSSL

/// `castline run --config FILE`: the daemon (see configs/castline.service).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the config's jobs as a daemon (systemd Type=notify).",
        discussion: """
            Discovers devices (plugins and the config's devices), keeps each job's media playing on the \
            devices it matches, casting again as the job's recast_on and takeover say. Tells systemd \
            READY=1, a STATUS= line (jobs and device states), WATCHDOG=1 at half WatchdogSec.
            SIGHUP: re-reads the config: log rules apply at once, changed jobs restart (a config with \
            errors is refused with file:line:column and the previous one keeps running).
            SIGTERM/SIGINT: ends the sessions as daemon.on_stop says (leave | stop) and flushes the log sinks.
            """ + "\n" + CastlineExit.summary)

    @Option(name: .long, help: ArgumentHelp("The config file (YAML). Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?
    @Option(name: .long, help: "A folder or .so file to load plugins from (before the config's paths). Repeatable.")
    var pluginPath: [String] = []
    @Option(name: .long, help: "Log rules (override the config's logging.rules until the next SIGHUP).")
    var log: String?
    @Option(name: .long, help: ArgumentHelp("The API's Unix socket (default: config api.socket, else $RUNTIME_DIRECTORY/castline.sock, /run/castline/castline.sock as root, $XDG_RUNTIME_DIR/castline.sock).", valueName: "path"))
    var apiSocket: String?

    func run() async throws {
        let signals = SignalStream([SIGHUP, SIGTERM, SIGINT])
        let options = DeviceRequest(config: config, pluginPath: pluginPath, log: log)
        let environment = try CommandEnvironment(options: options, featureKinds: [.discovery, .mediaFormat, .channel, .bridge], consoleMinimum: .info,
                                                 role: .daemon)
        let settings = environment.config
        let env = castline.environment()
        // The TCP listener's token and TLS are checked before anything starts: a bad file is a
        // config error, never a listener without protection.
        var token: APIToken?
        if let file = settings.api.tokenFile {
            do { token = try APIToken(file: file, environment: env) } catch {
                printError("\(settings.file): error: \(error)")
                throw CastlineExit.configError
            }
        }
        let tls = try Self.tlsContext(settings)
        let nearby = try Self.nearbyManager(environment)
        let announcer = nearby.map { NearbyJobAnnouncer(manager: $0, namespace: settings.nearby.namespace, logSystem: environment.logSystem) }
        let layers = LogRuleLayers(config: settings.logging.rules, configSource: settings.file,
                                   environment: env[LogSystem.environmentVariable], commandLine: log, defaultMinimum: .info)
        let jobsFile = settings.daemon.jobsFile ?? NearbyPermissionStore.defaultDirectory(environment: env) + "/jobs.json"
        let daemon = Daemon(config: settings, providers: environment.discoveryProviders(),
                            logSystem: environment.logSystem, group: environment.group, logLayers: layers,
                            jobStore: JobStore(path: jobsFile, logSystem: environment.logSystem), announcer: announcer,
                            plugins: HostChannelPlugins(host: environment.plugins),
                            fieldLearnedFile: Self.besideFile(jobsFile, named: "field-learned.json"),
                            syncCalibrationFile: Self.besideFile(jobsFile, named: "sync-calibration.json"))
        let plugins = environment.plugins
        let plane = ControlPlane(daemon: daemon, config: settings, logSystem: environment.logSystem, group: environment.group,
                                 probe: { media, type, head in plugins.probeMediaFormat(url: media, contentType: type, body: head).mapError { $0 } })
        await daemon.attach(plane)
        let logger = Logger(class: "RunCommand", system: environment.logSystem)
        DescriptorLimit.raise(log: logger)
        ProcessMemory.mapLargeBlocksOnTheirOwn(environment: env, logSystem: environment.logSystem)
        let server: APIServer
        do {
            server = try await APIServer.start(plane: plane, events: daemon.events, metrics: { await daemon.metricsText() },
                                               socket: apiSocket ?? settings.api.socket ?? APISocketPath.daemonDefault(environment: env),
                                               listen: settings.api.listen, token: token, tls: tls,
                                               readTimeout: settings.api.readTimeout, group: environment.group,
                                               logSystem: environment.logSystem)
        } catch {
            printError("castline run: \(error)")
            await environment.shutdown()
            throw CastlineExit.failure
        }
        // Bridges (the MQTT bridge) reach the hub through the same control plane as the API.
        let events = daemon.events
        let bridges = await plugins.startBridges(BridgeServices(
            request: { request in await InProcessRequest.answer(request, plane: plane) },
            subscribe: { kinds in
                InProcessRequest.events(events, kinds: kinds).map { BridgeEventFeed(events: $0.0, cancel: $0.cancel) }
                    .mapError { PluginCommandError($0.message) }
            }))
        let path = settings.file
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
        for bridge in bridges { await bridge.stop() }
        await server.stop()
        await plane.shutdown()
        nearby?.close()
        await environment.shutdown()
        _ = signals
    }

    /// The TCP listener's TLS context from `api.tls_certificate` and `api.tls_key` (exit 2 when
    /// they cannot be read).
    /// `name` in the folder of `path` (what devices were seen to do is kept beside the jobs file).
    static func besideFile(_ path: String, named name: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return name }
        return String(path[..<slash]) + "/" + name
    }

    static func tlsContext(_ settings: CastlineConfiguration) throws -> NIOSSLContext? {
        guard let certificate = settings.api.tlsCertificate, let key = settings.api.tlsKey else { return nil }
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain,
                                                                         privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            return try NIOSSLContext(configuration: configuration)
        } catch {
            printError("\(settings.file): error: api.tls_certificate / api.tls_key: \(error)")
            throw CastlineExit.configError
        }
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
