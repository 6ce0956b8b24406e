import ArgumentParser
import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastNearby
import CastlineConfig
import Glibc

/// `castline doctor`: checks everything castline depends on and says what to fix.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the setup: config, plugins, D-Bus, avahi-daemon, interfaces, journald, and a discovery dry run.",
        discussion: """
            Prints one line per check (✔ ok, ! warning, ✘ error, - skipped), each problem followed by a \
            "fix:" line, then runs discovery for --timeout seconds as `cast --device` would and, when no \
            device shows up, lists the likely reasons (avahi-daemon, multicast interfaces, firewall on \
            UDP 5353 / TCP 8009, devices on another subnet or VLAN, app-id filtering).
            --json: {"checks":[{"name","status","detail","fix"}],"ok":bool}.
            Exits 0 when no check is an error (warnings allowed), 1 otherwise.
            """)

    @Option(name: .long, help: ArgumentHelp("Config file (YAML). Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: "A folder or .so file to load plugins from (before CASTLINE_PLUGIN_PATH). Repeatable.")
    var pluginPath: [String] = []

    @Option(name: .long, help: "Seconds of the discovery dry run.")
    var timeout: Double = 3

    @Option(name: .long, help: "Only count devices that support this receiver app id (as discover --app). Repeatable.")
    var app: [String] = []

    @Flag(name: .long, help: "JSON output.")
    var json = false

    func validate() throws {
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be a number of seconds above 0 and at most 600") }
    }

    func run() async throws {
        let env = environment()
        let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .none))
        var checks: [DoctorCheck] = []
        func add(_ new: [DoctorCheck]) {
            checks += new
            if !json { for check in new { for line in check.lines { printLine(line) } } }
        }

        // Config: loaded without exiting; the defaults stand in when it has errors.
        let (path, source) = DoctorChecks.configPath(explicit: config, environment: env) { access($0, F_OK) == 0 }
        var settings = CastlineConfiguration()
        var outcome: Result<(config: CastlineConfiguration, warnings: [ConfigDiagnostic]), ConfigErrors>?
        if let path {
            do {
                let loaded = try CastlineConfiguration.load(path: path)
                settings = loaded.0
                outcome = .success((loaded.0, loaded.warnings))
            } catch {
                outcome = .failure(error)
            }
        }
        add([DoctorChecks.configCheck(path: path, source: source, outcome: outcome)])

        // Plugins.
        let inventory = PluginInventory(config: settings, pluginPath: pluginPath, environment: env, logSystem: logSystem)
        add(DoctorChecks.pluginFolderChecks(Self.folderFacts(inventory.searchPath)))
        let host = inventory.host
        host.loadAll()
        defer { host.shutdown() }
        add(DoctorChecks.pluginChecks(loaded: host.plugins.map { "\($0.id) \($0.version)" }, problems: host.problems))
        let declared = host.plugins.flatMap { inventory.declaredFeatures(path: $0.path).map(DeclaredFeature.init) }
        add(DoctorChecks.declarationChecks(declared, allowedServices: Set(settings.discovery.allowedServices),
                                           allowedNamespaces: settings.channels.permitted, configFile: settings.file))

        // System: D-Bus, avahi-daemon, interfaces, journald.
        let avahi = host.discoveryProviders().first { $0.feature.pluginID == "avahi-discovery" }
        let mdnsWanted = settings.discovery.autostart
            && DoctorChecks.providerAllowed(settings.discovery.providers, names: ["avahi", "avahi-discovery", "avahi-discovery/avahi"])
        let avahiInUse = mdnsWanted && avahi != nil
        let busAddress = env["DBUS_SYSTEM_BUS_ADDRESS"]
        let bus = DoctorChecks.dbusSocket(address: busAddress)
        let busFacts = bus.map { DoctorChecks.socketFacts($0.path, abstract: $0.abstract, type: Int32(SOCK_STREAM.rawValue)) }
        var handshake: Result<String?, DoctorChecks.SocketError>?
        if let bus, busFacts?.connectError == nil { handshake = DoctorChecks.dbusHandshake(bus.path, abstract: bus.abstract) }
        add([DoctorChecks.dbusCheck(address: busAddress, facts: busFacts, handshake: handshake, needed: avahiInUse)])
        let probe: AvahiProbe
        if let avahi {
            if case .success(nil)? = handshake {
                probe = .blocked("the system bus does not answer, and the avahi plugin would block on it")
            } else {
                probe = await DoctorChecks.probeAvahi(avahi, logSystem: logSystem, wait: min(2, timeout))
            }
        } else {
            probe = .noPlugin(DoctorChecks.socketFacts("/run/avahi-daemon/socket", type: Int32(SOCK_STREAM.rawValue)))
        }
        add([DoctorChecks.avahiCheck(probe, needed: avahiInUse)])
        let interfaces = DoctorChecks.interfaces()
        add(DoctorChecks.interfaceChecks(interfaces, configured: settings.discovery.interfaces, discoveryNeeded: mdnsWanted,
                                         configFile: settings.file))
        let journaldSink = settings.logging.sinks.first { $0.type == "journald" }
        let journalPath = journaldSink.flatMap { (try? JSONValue.parse($0.options))?["socket"]?.string } ?? "/run/systemd/journal/socket"
        add([DoctorChecks.journaldCheck(DoctorChecks.socketFacts(journalPath, type: Int32(SOCK_DGRAM.rawValue)), sinkConfigured: journaldSink != nil)])

        // Nearby messages: the permission (the medium is avahi-daemon, checked above).
        let nearbyStore = NearbyPermissionStore(directory: settings.nearby.stateDir ?? NearbyPermissionStore.defaultDirectory(environment: env),
                                                logSystem: logSystem)
        add([DoctorChecks.nearbyCheck(permission: nearbyStore.permission, problem: nearbyStore.problem, directory: nearbyStore.directory, path: nearbyStore.path,
                                      settings: settings.nearby, configFile: settings.file)])

        // Discovery dry run.
        if !json { printLine("… discovering for \(timeout.formatted) s") }
        var skipping: Set<String> = []
        if case .blocked = probe { skipping.insert("avahi-discovery") }
        let result = await DoctorChecks.dryRun(host: host, config: settings, appIDs: app, seconds: timeout, skipping: skipping, logSystem: logSystem)
        let usable = settings.discovery.interfaces.isEmpty ? interfaces.filter(\.usable)
            : interfaces.filter { $0.usable && settings.discovery.interfaces.contains($0.name) }
        var avahiProblem: String?
        if case .problem(let reason) = probe { avahiProblem = reason }
        if case .blocked(let reason) = probe { avahiProblem = reason }
        add([DoctorChecks.discoveryCheck(result, context: DiscoveryContext(
            avahiLoaded: avahiInUse, avahiProblem: avahiProblem, usableInterfaces: usable.count, autostart: settings.discovery.autostart,
            staticDevices: settings.devices.count, appIDs: app, configFile: settings.file))])
        add([DoctorChecks.keepAliveCheck(result.found, config: settings)])

        if json {
            printLine(DoctorCheck.report(checks).serialized())
        } else {
            let errors = checks.filter { $0.status == .error }.count, warnings = checks.filter { $0.status == .warning }.count
            printLine("")
            printLine(errors == 0 ? "no errors (\(warnings) warning(s))" : "\(errors) error(s), \(warnings) warning(s)")
        }
        if DoctorCheck.hasError(checks) { throw CastlineExit.failure }
    }

    /// Each search-path entry: does it exist, its plugin files, and PluginFileSafety's verdict on each
    /// file (which covers its folder), or on the folder itself when it holds no plugin yet.
    static func folderFacts(_ searchPath: PluginSearchPath) -> [PluginFolderFacts] {
        let files = searchPath.candidateFiles().files
        return searchPath.entries.map { entry in
            var st = stat()
            let exists = stat(entry.path, &st) == 0
            var facts = PluginFolderFacts(path: entry.path, source: entry.source.rawValue, exists: exists,
                                          isFile: exists && (st.st_mode & S_IFMT) == S_IFREG)
            guard exists else { return facts }
            facts.pluginFiles = files.filter { $0.entry == entry }.map(\.path)
            for file in facts.pluginFiles {
                if let problem = PluginFileSafety.problem(with: file) { facts.unsafe.append(.init(path: file, problem: problem)) }
            }
            if facts.pluginFiles.isEmpty, !facts.isFile, let problem = PluginFileSafety.problem(with: entry.path),
               let resolved = realpath(entry.path, nil) {
                // Only what is said about the folder itself (the check also looks at its parent, which the loader does not).
                let folder = String(cString: resolved)
                free(resolved)
                if problem.hasPrefix("the file \(folder) ") {
                    facts.unsafe.append(.init(path: entry.path, problem: "the folder" + problem.dropFirst("the file".count), isFolderOnly: true))
                }
            }
            return facts
        }
    }
}
