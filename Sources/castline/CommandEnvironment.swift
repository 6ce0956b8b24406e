import ArgumentParser
import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastProtocol
import CastSender
import CastTransport
import CastlineConfig
import CastlineDaemon
import Glibc
import NIOPosix

/// What a command needs, built from its options and the config file: the log system (console
/// on stderr, config sinks), the plugin host, device resolution and the event loop. Direct
/// mode's sessions live in a ``LocalHub`` built on it.
/// One per process; `shutdown()` before exit flushes the sinks.
final class CommandEnvironment: @unchecked Sendable {
    let config: CastlineConfiguration
    let logSystem: LogSystem
    let plugins: PluginHost
    let group: MultiThreadedEventLoopGroup
    let log: Logger
    private let options: DeviceRequest

    /// Loads the config (exit 2 on errors, printed as file:line:column), sets up logging and
    /// loads the plugins of `featureKinds` (plus log sinks when the config names some, plus
    /// discovery when `--device` cannot be resolved without it).
    /// `role`: the daemon writes to the config's sinks; any other command only when asked
    /// (`logging.cli_sinks: true`, or `CASTLINE_LOG_SINKS=1`), so a command run beside the daemon
    /// never mixes its records into the daemon's files. What happens before the sinks open (the
    /// plugins' load) is held and handed to them when they do.
    init(options: DeviceRequest, featureKinds: Set<PluginFeatureKind>, consoleMinimum: LogLevel = .warning,
         role: LogProcess.Role = .cli) throws {
        self.options = options
        let env = environment()
        config = try Self.loadConfig(explicit: options.config, environment: env)
        logSystem = LogSystem(filter: LoggerFilter(minimumLevel: consoleMinimum))
        logSystem.process = LogProcess(role: role)
        let sinks = Self.writesToSinks(role: role, config: config, environment: env) ? config.logging.sinks : []
        if !sinks.isEmpty { logSystem.holdForLateSinks() }
        if config.logging.console {
            logSystem.addSink(ConsoleLogSink(style: LogRecordFormatter.Style(rawValue: config.logging.consoleFormat) ?? .short))
        }
        if let rules = config.logging.rules { try? logSystem.applyRules(rules, source: config.file) }
        if let error = logSystem.applyEnvironment(env) { throw ValidationError("CASTLINE_LOG: \(error)") }
        if let rules = options.log {
            do { try logSystem.applyRules(rules, source: "--log") } catch { throw ValidationError("--log: \(error)") }
        }
        log = Logger(class: "CommandEnvironment", system: logSystem)
        var kinds = featureKinds
        if !sinks.isEmpty { kinds.insert(.logSink) }
        if Self.needsDiscovery(options: options, config: config) { kinds.insert(.discovery) }
        var pluginConfigs = config.plugins.configs
        if !config.discovery.interfaces.isEmpty, pluginConfigs["avahi-discovery"] == nil {
            pluginConfigs["avahi-discovery"] = JSONValue.object(["interfaces": .array(config.discovery.interfaces.map { .string($0) })]).serialized()
        }
        // The mqtt: section is the MQTT bridge's config; without it the bridge stays idle.
        if var mqtt = config.mqtt, pluginConfigs[MQTTBridgeConfig.pluginID] == nil {
            // The password file is a secret like the API token: the same checks (where the bridge
            // runs), a systemd credential by name.
            if let given = mqtt.passwordFile, featureKinds.contains(.bridge) {
                do {
                    let path = try SecretFile.resolve(given, environment: env)
                    if let problem = SecretFile.problem(path, key: "mqtt.password_file") { throw SecretFile.Refusal(problem) }
                    mqtt.passwordFile = path
                } catch {
                    printError("\(config.file): error: \(error)")
                    throw CastlineExit.configError
                }
            }
            pluginConfigs[MQTTBridgeConfig.pluginID] = mqtt.pluginJSON
        }
        var hostConfiguration = PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: options.pluginPath, environment: env, config: config.plugins.paths),
            allowedServiceTypes: Set(config.discovery.allowedServices), allowedNamespaces: config.channels.permitted,
            pluginConfigs: pluginConfigs, disabledPlugins: Set(config.plugins.disabled), featureKinds: kinds,
            scanner: PluginScanner.castline(timeout: config.plugins.callTimeout), callTimeout: config.plugins.callTimeout)
        hostConfiguration.isolatedPlugins = Set(config.plugins.isolated)
        hostConfiguration.inProcessPlugins = Set(config.plugins.inProcess)
        hostConfiguration.limits = IsolationLimits(memoryMB: config.plugins.limits.memoryMB, cpuSeconds: config.plugins.limits.cpuSeconds,
                                                   openFiles: config.plugins.limits.openFiles)
        plugins = PluginHost(configuration: hostConfiguration, logSystem: logSystem)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        if !kinds.isEmpty { plugins.loadAll() }
        defer { logSystem.releaseHeld() }
        for sink in sinks {
            do {
                logSystem.addSink(try plugins.openAnyLogSink(id: sink.type, options: sink.options))
            } catch {
                printError("\(config.file):\(sink.mark.line):\(sink.mark.column): error: logging sink \"\(sink.type)\": \(error)")
                throw CastlineExit.configError
            }
        }
        // The daemon's crash (an in-process plugin's SIGSEGV) leaves one record in the JSON sink's file.
        if role == .daemon, let sink = sinks.first(where: { $0.type == "json" }),
           let path = (try? JSONValue.parse(sink.options))?["path"]?.string, path != "-", !path.isEmpty {
            DaemonCrashRecord.install(jsonSinkPath: path, logSystem: logSystem)
        }
    }

    /// The environment variable that makes a command write to the config's sinks.
    static let sinksVariable = "CASTLINE_LOG_SINKS"

    /// Whether a process of `role` writes to the config's log sinks: the daemon always; another
    /// command when `logging.cli_sinks` or `CASTLINE_LOG_SINKS` (`1`/`true`, or `0`/`false` to
    /// override the config) asks for it.
    static func writesToSinks(role: LogProcess.Role, config: CastlineConfiguration, environment env: [String: String]) -> Bool {
        if role == .daemon { return true }
        switch env[sinksVariable]?.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: return config.logging.cliSinks
        }
    }

    /// `--config`, `$CASTLINE_CONFIG`, then `~/.config/castline/castline.yaml` when it exists;
    /// none: the built-in defaults. Errors are printed and end the process with exit code 2.
    static func loadConfig(explicit: String?, environment env: [String: String]) throws -> CastlineConfiguration {
        guard let path = DoctorChecks.configPath(explicit: explicit, environment: env, exists: { access($0, F_OK) == 0 }).path else {
            return CastlineConfiguration()
        }
        do {
            let (config, warnings) = try CastlineConfiguration.load(path: path)
            for warning in warnings { printError(warning.description) }
            return config
        } catch {
            for diagnostic in error.diagnostics { printError(diagnostic.description) }
            throw CastlineExit.configError
        }
    }

    func shutdown() async {
        try? await group.shutdownGracefully()
        _ = logSystem.shutdown()
        plugins.shutdown()
    }

    // MARK: Devices.

    /// A device named without discovery: a config device (by name or alias) or an address.
    static func directDevice(_ text: String, config: CastlineConfiguration) -> CastDevice? {
        if let entry = configDevice(text, config: config) {
            return CastDevice(id: entry.id ?? HostPort.name(host: entry.host, port: entry.port),
                              friendlyName: entry.name, host: entry.host, port: entry.port, modelName: entry.model ?? "", provider: "config")
        }
        guard let host = try? DiscoverCommand.parseHost(text), Self.isAddress(host.host) else { return nil }
        let endpoint = HostPort.name(host: host.host, port: host.port)
        return CastDevice(id: endpoint, friendlyName: endpoint, host: host.host, port: host.port, provider: "address")
    }

    /// The `devices:` entry named `text` (its name or an alias, any case).
    static func configDevice(_ text: String, config: CastlineConfiguration) -> DeviceEntry? {
        config.devices.first { e in ([e.name] + e.aliases).contains { $0.lowercased() == text.lowercased() } }
    }

    /// A device reached by address (a `devices:` entry or `--device HOST[:PORT]`) with what it
    /// says about itself in eureka_info, as `castline run` reads it (``AddressedDeviceIdentity``:
    /// id, name, model, capabilities; a speaker group's endpoint on its leader's address is the
    /// group). One HTTPS request, at most a second (``EurekaInfoClient``). The config's name,
    /// id and model win. Unanswered, the device stays as given.
    func identified(_ device: CastDevice, configured entry: DeviceEntry? = nil) async -> CastDevice {
        let info = await EurekaInfoClient.describe(host: device.host, group: group, logSystem: logSystem)
        let identified = AddressedDeviceIdentity.identify(device, eureka: info, keepName: entry != nil, keepID: entry?.id != nil,
                                                          model: entry?.model)
        log.debug("\(identified.friendlyName) at \(identified.endpoint): \(AddressedDeviceIdentity.summary(identified, eureka: info, model: entry?.model))", [
            "device": .string(identified.id), "model": .string(identified.modelName), "group": .bool(identified.isGroup),
        ])
        return identified
    }

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 || host == "localhost"
    }

    static func needsDiscovery(options: DeviceRequest, config: CastlineConfiguration) -> Bool {
        guard let device = options.device else { return false }
        if directDevice(device, config: config) != nil { return false }
        return config.discovery.autostart
    }

    /// The devices `--device` names: a config device or address at once; otherwise discovery
    /// (plugins, config devices and `--host`) until an exact name/id matches, or until the
    /// timeout for a glob (which may match several). Exit 3 with the reasons when none matches.
    func resolveDevices() async throws -> [CastDevice] {
        guard let text = options.device else {
            printError("castline: --device is required (a name, alias, glob, device id or host[:port]); `castline discover` lists devices")
            throw CastlineExit.usage
        }
        if let device = Self.directDevice(text, config: config) {
            return [await identified(device, configured: Self.configDevice(text, config: config))]
        }
        let selector: DeviceSelector
        do { selector = try DeviceSelector(text) } catch {
            printError("castline: --device \(text): \(error)")
            throw CastlineExit.usage
        }
        let aliases = Dictionary(config.devices.map { ($0.host + ":\($0.port)", $0.aliases) }, uniquingKeysWith: { a, _ in a })
        let matches: @Sendable (CastDevice) -> Bool = { device in
            selector.matches(name: device.friendlyName, id: device.id, aliases: aliases["\(device.host):\(device.port)"] ?? [])
        }
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(), logSystem: logSystem)
        for provider in discoveryProviders() { await manager.add(provider) }
        var hosts = try options.host.map { try DiscoverCommand.parseHost($0) }
        if config.discovery.allows(["static"]) {
            hosts += config.devices.map { StaticHostProvider.Host(host: $0.host, port: $0.port, name: $0.name, id: $0.id, model: $0.model) }
        }
        let staticHosts = hosts.isEmpty ? nil : StaticHostProvider(hosts: hosts, group: group, logSystem: logSystem)
        if let staticHosts { await manager.add(staticHosts) }
        let onlyStatic = discoveryProviders().isEmpty
        await manager.start()
        let seconds = options.timeout ?? config.discovery.timeout
        var found: [CastDevice] = []
        if selector.isGlob {
            // With mDNS a glob waits out the timeout (more devices may answer); with configured
            // hosts alone it is done once each has answered or failed.
            if onlyStatic, let staticHosts {
                let deadline = MonotonicClock.seconds() + seconds
                while !staticHosts.hasProbedEveryHost, MonotonicClock.seconds() < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            } else {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            }
            found = await manager.devices.filter(matches)
        } else if let device = await manager.waitForDevice(timeout: seconds, where: matches) {
            found = [device]
        }
        let explanation = await manager.explanation?.lines ?? []
        let visible = await manager.devices.map(\.friendlyName)
        await manager.stop()
        if found.isEmpty {
            var text = "castline: no device matches \"\(text)\" after \(seconds.formatted) s"
            text += visible.isEmpty ? "" : "; found: " + visible.joined(separator: ", ")
            for line in explanation { text += "\n  - \(line)" }
            if !config.discovery.autostart { text += "\n  - discovery.autostart is false in \(config.file): only config devices are used" }
            printError(text)
            throw CastlineExit.noDevice
        }
        return found
    }

    /// The plugin discovery providers the config lets run (none when discovery.autostart is false).
    func discoveryProviders() -> [PluginDiscoveryProvider] {
        guard config.discovery.autostart else { return [] }
        return plugins.discoveryProviders().filter {
            config.discovery.allows([$0.name, $0.feature.pluginID, $0.feature.qualifiedName])
        }
    }
}
