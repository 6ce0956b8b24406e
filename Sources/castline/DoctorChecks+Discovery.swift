import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastSender
import CastlineConfig
import NIOPosix

/// What asking the avahi plugin (or, without it, looking for avahi-daemon's socket) showed.
enum AvahiProbe: Sendable, Equatable {
    /// No avahi discovery feature is loaded: only the daemon's socket was looked at.
    case noPlugin(SocketFacts)
    /// The plugin could not start or reported a problem.
    case problem(String)
    /// The plugin found devices.
    case devices(Int)
    /// No problem reported within this many seconds.
    case quiet(Double)
    /// Not asked: its start would block (the system bus does not answer), or it did not return from
    /// start within the wait (reason given). The dry run leaves it out.
    case blocked(String)
}

/// A discovery dry run: what was found, and the manager's explanation when nothing was.
struct DryRunResult: Sendable, Equatable {
    /// `Lobby TV (192.168.1.20:8009, avahi)`.
    var devices: [String]
    /// ``DiscoveryExplanation/lines`` when the list is empty.
    var explanation: [String]
    var filteredOut: Int
    /// Providers that ran.
    var providers: [String]
    var seconds: Double
    /// What the field checks need of each device found: name, id, model, whether it has video.
    var found: [FoundDevice] = []

    struct FoundDevice: Sendable, Equatable {
        var name: String
        var id: String
        var model: String
        var isVideo: Bool
    }
}

/// What the discovery verdict needs to know from the other checks.
struct DiscoveryContext: Sendable, Equatable {
    /// The avahi plugin is loaded (and allowed by discovery.providers).
    var avahiLoaded: Bool
    /// What the avahi plugin reported (nil: no problem, or not asked).
    var avahiProblem: String?
    var usableInterfaces: Int
    var autostart: Bool
    var staticDevices: Int
    var appIDs: [String]
    var configFile: String
}

extension DoctorChecks {
    /// `discovery.providers` (nil: all) lets a provider run when it names its feature id, plugin id or `plugin/feature`. Pure.
    static func providerAllowed(_ wanted: [String]?, names: [String]) -> Bool {
        var settings = DiscoverySettings()
        settings.providers = wanted
        return settings.allows(names)
    }

    /// Runs the avahi plugin alone for at most `wait` seconds: a problem report or a device ends it
    /// early. A start that does not return within `wait` + 2 s (libavahi-client blocking on a hung
    /// bus) is given up: `.blocked` (the blocked thread is left behind; doctor exits soon after).
    static func probeAvahi(_ provider: PluginDiscoveryProvider, logSystem: LogSystem, wait: Double) async -> AvahiProbe {
        let (results, result) = AsyncStream<AvahiProbe>.makeStream()
        let probe = Task {
            let manager = DiscoveryManager(criteria: DiscoveryCriteria(), logSystem: logSystem)
            await manager.add(provider)
            let events = manager.events()
            await manager.start()
            let event = await events.first(within: wait) { event in
                switch event {
                case .problem(_, _?), .inserted: return true
                default: return false
                }
            }
            let count = await manager.devices.count
            await manager.stop()
            switch event {
            case .problem(_, let reason?)?: result.yield(.problem(reason))
            case .inserted?: result.yield(.devices(max(count, 1)))
            default: result.yield(.quiet(wait))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(Int((wait + 2) * 1000)))
            result.yield(.blocked("the avahi plugin did not return from start within \((wait + 2).formatted) s (libavahi-client blocks when D-Bus or avahi-daemon hangs)"))
        }
        defer { timer.cancel() }
        for await first in results { return first }
        _ = probe
        return .blocked("no result")
    }

    /// The avahi-daemon verdict. Pure. `needed`: mDNS discovery is in use.
    static func avahiCheck(_ probe: AvahiProbe, needed: Bool) -> DoctorCheck {
        let fix = "sudo systemctl start avahi-daemon (and check that allow-interfaces / deny-interfaces in "
            + "/etc/avahi/avahi-daemon.conf let it use the interface facing the devices)"
        switch probe {
        case .quiet(let seconds):
            return DoctorCheck("avahi-daemon", .ok, "the avahi plugin reports no problem within \(seconds.formatted) s: avahi-daemon answers")
        case .devices(let count):
            return DoctorCheck("avahi-daemon", .ok, "avahi-daemon answers: the avahi plugin found \(count) device(s)")
        case .problem(let reason):
            // The daemon (or the bus) is away, or the plugin refused its options (plugins.config.avahi-discovery).
            let daemon = ["not running", "cannot create a client", "client failed", "browse failed", "D-Bus"].contains { reason.contains($0) }
            return DoctorCheck("avahi-daemon", needed ? .error : .warning, "the avahi plugin reports: \(reason)",
                               fix: daemon ? fix : "correct plugins.config.avahi-discovery (or discovery.interfaces) in the config: the plugin refused its options")
        case .blocked(let reason):
            return DoctorCheck("avahi-daemon", needed ? .error : .warning, "not asked: \(reason)",
                               fix: "sudo systemctl restart dbus avahi-daemon")
        case .noPlugin(let socket):
            if socket.connectError == nil {
                return DoctorCheck("avahi-daemon", .ok, "\(socket.path) accepts connections (no avahi plugin loaded to ask)")
            }
            return DoctorCheck("avahi-daemon", .warning, "no avahi plugin loaded, and \(socket.path): \(socket.connectError ?? "absent"): avahi-daemon is not running",
                               fix: fix)
        }
    }

    /// Discovery as `castline cast --device` runs it (the config's discovery plugins and static
    /// devices) for `seconds`.
    /// `skipping`: plugin ids left out (a plugin that would block).
    static func dryRun(host: PluginHost, config: CastlineConfiguration, appIDs: [String], seconds: Double, skipping: Set<String> = [],
                       logSystem: LogSystem) async -> DryRunResult {
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(appIDs: Set(appIDs)), logSystem: logSystem)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var names: [String] = []
        if config.discovery.autostart {
            for provider in host.discoveryProviders() where !skipping.contains(provider.feature.pluginID)
                && providerAllowed(config.discovery.providers, names: [provider.name, provider.feature.pluginID, provider.feature.qualifiedName]) {
                await manager.add(provider)
                names.append(provider.feature.qualifiedName)
            }
        }
        if !config.devices.isEmpty, providerAllowed(config.discovery.providers, names: ["static"]) {
            let hosts = config.devices.map { StaticHostProvider.Host(host: $0.host, port: $0.port, name: $0.name, id: $0.id, model: $0.model) }
            await manager.add(StaticHostProvider(hosts: hosts, group: group, logSystem: logSystem))
            names.append("static")
        }
        await manager.start()
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        let seen = await manager.devices
        let devices = seen.map { "\($0.friendlyName) (\($0.endpoint), \($0.provider))" }
        let found = seen.map { DryRunResult.FoundDevice(name: $0.friendlyName, id: $0.id, model: $0.modelName,
                                                        isVideo: $0.capabilities?.contains(.videoOut) ?? true) }
        let explanation = await manager.explanation?.lines ?? []
        let filtered = await manager.filteredOutCount
        await manager.stop()
        try? await group.shutdownGracefully()
        return DryRunResult(devices: devices, explanation: explanation, filteredOut: filtered, providers: names, seconds: seconds, found: found)
    }

    /// Pages that no keep-alive can hold on the devices found (only media resets their idle
    /// timer): a warning naming each job, device and model, and the way out. Pure.
    static func keepAliveCheck(_ found: [DryRunResult.FoundDevice], config: CastlineConfiguration) -> DoctorCheck {
        let pages = found.flatMap { device in
            config.pagesWithoutKeepAlive(device: device.name, id: device.id,
                                         aliases: config.devices.first { $0.name == device.name || $0.id == device.id }?.aliases ?? [],
                                         model: config.devices.first { $0.name == device.name }?.model ?? device.model, isVideoDevice: device.isVideo)
        }
        guard !pages.isEmpty else {
            return DoctorCheck("keep-alive", .ok, found.isEmpty ? "no device found to judge" : "every page job's devices keep a page up with keep-alives, or no job shows a page")
        }
        return DoctorCheck("keep-alive", .warning, pages.map(\.message).joined(separator: "\n"),
                           fix: "host the castline receiver and set the job's receiver (docs/receiver.md), or accept a relaunch at each close")
    }

    /// The dry-run verdict: the devices, or why there are none and what to do. Pure.
    static func discoveryCheck(_ result: DryRunResult, context: DiscoveryContext) -> DoctorCheck {
        let name = "discovery dry run"
        let providers = result.providers.isEmpty ? "no provider" : "providers: " + result.providers.joined(separator: ", ")
        if !result.devices.isEmpty {
            return DoctorCheck(name, .ok, "\(result.devices.count) device(s) in \(result.seconds.formatted) s (\(providers)): "
                                   + result.devices.joined(separator: ", "))
        }
        let detail = "no device found in \(result.seconds.formatted) s (\(providers))"
            + result.explanation.map { "\n- \($0)" }.joined()
        return DoctorCheck(name, .error, detail, fix: "likely reasons, most likely first:\n" + likelyReasons(result, context: context).map { "- \($0)" }.joined(separator: "\n"))
    }

    /// Why discovery finds nothing (the headless form of the "Cast not available" help), each with what to do. Pure.
    static func likelyReasons(_ result: DryRunResult, context c: DiscoveryContext) -> [String] {
        let file = c.configFile == "<default>" ? "the config" : c.configFile
        var reasons: [String] = []
        if !c.autostart {
            reasons.append("discovery.autostart is false in \(file): only the devices: entries are tried; set it to true for mDNS")
        } else if !c.avahiLoaded {
            reasons.append("no mDNS discovery plugin runs (avahi-discovery missing, disabled, refused or left out of discovery.providers): "
                           + "see the plugins checks above, or list the devices by address under devices:")
        }
        if c.avahiLoaded, c.avahiProblem != nil {
            reasons.append("the avahi plugin cannot browse (\(c.avahiProblem ?? "")): see the avahi-daemon check")
        }
        if c.usableInterfaces == 0 {
            reasons.append("no interface is up with multicast: mDNS cannot reach the network (see the interfaces check)")
        }
        if result.filteredOut > 0 {
            reasons.append("\(result.filteredOut) device(s) found but filtered out: they do not support app \(c.appIDs.joined(separator: ", ")); "
                           + "try without --app, or check the app id")
        } else if !c.appIDs.isEmpty {
            reasons.append("only devices that support app \(c.appIDs.joined(separator: ", ")) count (--app): try without --app")
        }
        if result.providers.contains("static") {
            reasons.append("the \(c.staticDevices) device(s) under devices: do not answer on their Cast port (TCP 8009 unless set): "
                           + "check each address, that the device is on, and that no firewall blocks it")
        }
        if c.autostart {
            reasons.append("a firewall drops mDNS or Cast traffic: allow UDP 5353 in and out (224.0.0.251, ff02::fb) and TCP 8009 "
                           + "out to the devices (e.g. `sudo ufw allow 5353/udp`)")
            reasons.append("the devices are on another VLAN or subnet: mDNS does not cross routers; add each device under devices: with "
                           + "its address (devices: [{name: Living Room TV, host: 192.168.20.31}]), or run an mDNS reflector "
                           + "(avahi enable-reflector=yes)")
            reasons.append("castline runs in a container: use the host network (docker run --network host) so multicast reaches the LAN")
        }
        reasons.append("the devices are off, or on an isolated (guest) Wi-Fi network")
        return reasons
    }
}
