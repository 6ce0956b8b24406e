import ArgumentParser
import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastSender
import Glibc
import Synchronization
import NIOPosix

/// `castline discover`: list Cast devices from the discovery plugins (Avahi) and static hosts.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Find Cast devices (mDNS through the avahi plugin, and --host addresses).",
        discussion: """
            Without --follow: waits --timeout seconds, prints the devices sorted by name (a table, or \
            one JSON object per device per line with --json) and exits 0; with no device found it \
            prints why on stderr (no provider, avahi-daemon not running, devices filtered out by \
            --app…) and exits 1.
            With --follow: prints each change as it happens (JSON lines with --json: \
            {"event":"found"|"updated"|"lost"|"problem"|"recovered",…}) until SIGINT/SIGTERM or \
            --timeout, then exits 0 without reporting the devices as lost (they were not).
            Plugins are searched in --plugin-path, CASTLINE_PLUGIN_PATH, then next to the binary.
            """
    )

    @Option(name: .long, help: "Seconds to browse (default 3; with --follow: until a signal).")
    var timeout: Double?

    @Flag(name: .long, help: "Keep running and print every change.")
    var follow = false

    @Flag(name: .long, help: "JSON output.")
    var json = false

    @Option(name: .long, help: "Only devices that support this receiver app id (subtype / GET_APP_AVAILABILITY).")
    var app: [String] = []

    @Option(name: .long, help: "A device address to probe (host or host:port), besides mDNS. Repeatable.")
    var host: [String] = []

    @Option(name: .long, help: "A folder or .so file to load plugins from (before CASTLINE_PLUGIN_PATH). Repeatable.")
    var pluginPath: [String] = []

    @Option(name: .long, help: "A plugin's config as ID=JSON, e.g. avahi-discovery='{\"interfaces\":[\"eth1\"]}'. Repeatable.")
    var pluginConfig: [String] = []

    @Option(name: .long, help: "Log rules, e.g. \"*:warning,AvahiBrowser:debug\" (overrides CASTLINE_LOG).")
    var log: String?

    func run() async throws {
        SignalWaiter.block([SIGINT, SIGTERM])
        // Warnings and errors by default: stdout carries the result.
        let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .warning))
        logSystem.addSink(ConsoleLogSink())
        if let error = logSystem.applyEnvironment(environment()) { throw ValidationError("CASTLINE_LOG: \(error)") }
        if let log {
            do { try logSystem.applyRules(log, source: "--log") } catch { throw ValidationError("--log: \(error)") }
        }
        defer { _ = logSystem.shutdown() }
        if let timeout, !(timeout > 0 && timeout < 86_400 * 365) { throw ValidationError("--timeout must be a positive number of seconds") }

        var configs: [String: String] = [:]
        for entry in pluginConfig {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw ValidationError("--plugin-config \(entry): expected ID=JSON")
            }
            let id = String(entry[..<equals]), text = String(entry[entry.index(after: equals)...])
            do {
                guard case .object = try JSONValue.parse(text) else { throw ValidationError("--plugin-config \(id): the config must be a JSON object") }
            } catch let error as JSONParseError {
                throw ValidationError("--plugin-config \(id): invalid JSON: \(error)")
            }
            configs[id] = text
        }
        let plugins = PluginHost(configuration: PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: pluginPath, environment: environment()), pluginConfigs: configs,
            featureKinds: [.discovery], scanner: PluginScanner.castline(timeout: 5)), logSystem: logSystem)
        plugins.loadAll()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let manager = DiscoveryManager(criteria: DiscoveryCriteria(appIDs: Set(app)), logSystem: logSystem)
        for provider in plugins.discoveryProviders() { await manager.add(provider) }
        if !host.isEmpty {
            let hosts = try host.map { try Self.parseHost($0) }
            await manager.add(StaticHostProvider(hosts: hosts, group: group, logSystem: logSystem))
        }
        let events = manager.events()
        await manager.start()
        let printer = EventPrinter(json: json)
        let seconds = timeout ?? (follow ? 86_400 * 365 : 3)
        // Ends on the first of: a signal, the timeout. Then the manager stops, which ends `events`.
        // (The signal wait cannot be cancelled: it is raced in unstructured tasks, not a task group.)
        let (ending, endingContinuation) = AsyncStream<Void>.makeStream()
        Task {
            _ = await SignalWaiter.wait([SIGINT, SIGTERM])
            endingContinuation.yield()
        }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            endingContinuation.yield()
        }
        let ended = EndedFlag()
        let printing = Task {
            for await event in events {
                if case .stopped = event { break }
                if follow, !ended.isSet { printer.print(event) }
            }
        }
        for await _ in ending { break }
        timer.cancel()
        // Nothing is printed once it ends: stopping reports every device removed, which is not
        // a loss. (Cancelling the printing is not enough: a task busy printing when cancelled
        // still gets what the stream had buffered by its next read.)
        ended.set()
        printing.cancel()
        var devices = await manager.devices
        let reasons = devices.isEmpty ? (await manager.explanation?.lines ?? []) : []
        await manager.stop()
        await printing.value
        if !follow { devices = await Self.withGroupMembers(devices, group: group, logSystem: logSystem) }
        try? await group.shutdownGracefully()
        if follow { return }
        printer.printList(devices)
        if devices.isEmpty {
            var text = "no Cast device found:\n"
            for line in reasons { text += "  - \(line)\n" }
            printError(String(text.dropLast()))
            throw ExitCode(1)
        }
    }

    /// Each speaker group with its members (multizone GET_STATUS, all groups at once, each bounded
    /// by 3 s); a group that does not answer is listed without them.
    static func withGroupMembers(_ devices: [CastDevice], group: MultiThreadedEventLoopGroup, logSystem: LogSystem) async -> [CastDevice] {
        await withTaskGroup(of: (Int, [MultizoneView.Member]?).self) { tasks in
            for (index, device) in devices.enumerated() where device.isGroup {
                tasks.addTask {
                    switch await MultizoneProbe.members(of: device, group: group, timeout: 3, logSystem: logSystem) {
                    case .success(let members): return (index, members)
                    case .failure(let error):
                        Logger(class: "DiscoverCommand", system: logSystem)
                            .warning("group \(device.friendlyName): members unknown: \(error)", ["device": .string(device.id)])
                        return (index, nil)
                    }
                }
            }
            var result = devices
            for await (index, members) in tasks { if let members { result[index].groupMembers = members } }
            return result
        }
    }

    static func parseHost(_ text: String) throws -> StaticHostProvider.Host {
        if text.hasPrefix("[") , let close = text.firstIndex(of: "]") {
            let address = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return StaticHostProvider.Host(host: address) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else {
                throw ValidationError("--host \(text): expected [ipv6]:port")
            }
            return StaticHostProvider.Host(host: address, port: port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let port = Int(parts[1]), (1...65535).contains(port), !parts[0].isEmpty else { throw ValidationError("--host \(text): expected host:port with a port 1-65535") }
            return StaticHostProvider.Host(host: String(parts[0]), port: port)
        }
        guard !text.isEmpty else { throw ValidationError("--host: empty") }
        return StaticHostProvider.Host(host: text)
    }
}

/// Prints discovery events and lists as text or JSON.
struct EventPrinter {
    let json: Bool

    static func object(_ d: CastDevice) -> JSONValue {
        var o = JSONObject()
        o.set("id", .string(d.id))
        o.set("name", .string(d.friendlyName))
        o.set("host", .string(d.host))
        o.set("port", .int(Int64(d.port)))
        o.set("model", .string(d.modelName))
        o.set("provider", .string(d.provider))
        if !d.addresses.isEmpty { o.set("addresses", .array(d.addresses.map { .string($0) })) }
        if let caps = d.capabilities { o.set("capabilities", .int(Int64(caps.rawValue))) }
        if let status = d.statusText { o.set("status_text", .string(status)) }
        if !d.supportedAppIDs.isEmpty { o.set("app_ids", .array(d.supportedAppIDs.sorted().map { .string($0) })) }
        if d.isGroup {
            o.set("group", true)
            o.set("members", .array(d.groupMembers.map { member in
                var entry: JSONObject = ["id": .string(member.id), "name": .string(member.name)]
                if let channel = member.channel { entry.set("channel", .string(channel)) }
                return .object(entry)
            }))
        }
        return .object(o)
    }

    func print(_ event: DiscoveryEvent) {
        let line: String
        switch event {
        case .inserted(let d, _): line = json ? Self.line("found", device: d) : "+ \(d)"
        case .updated(let d, _): line = json ? Self.line("updated", device: d) : "~ \(d)"
        case .removed(let d): line = json ? Self.line("lost", device: d) : "- \(d)"
        case .problem(let provider, let reason?):
            line = json ? JSONValue.object(["event": "problem", "provider": .string(provider), "reason": .string(reason)]).serialized()
                : "! \(provider): \(reason)"
        case .problem(let provider, nil):
            line = json ? JSONValue.object(["event": "recovered", "provider": .string(provider)]).serialized() : "! \(provider): recovered"
        case .started, .stopped: return
        }
        Swift.print(line)
        fflush(nil)
    }

    static func line(_ event: String, device: CastDevice) -> String {
        JSONValue.object(["event": .string(event), "device": object(device)]).serialized()
    }

    func printList(_ devices: [CastDevice]) {
        if json {
            for d in devices { Swift.print(Self.object(d).serialized()) }
            return
        }
        for d in devices {
            var line = "\(d.friendlyName)\t\(d.modelName.isEmpty ? "-" : d.modelName)\t\(d.endpoint)\t\(d.id)\t\(d.provider)"
            if d.isGroup {
                let members = d.groupMembers.map { member in member.channel.map { "\(member.name) (\($0.lowercased()))" } ?? member.name }
                line += "\tgroup: " + (members.isEmpty ? "members unknown" : members.joined(separator: ", "))
            }
            Swift.print(line)
        }
    }
}

/// Set once `discover` ends; read by the task that prints events.
final class EndedFlag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
