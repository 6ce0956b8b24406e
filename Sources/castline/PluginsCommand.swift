import ArgumentParser
import CastCore
import CastLogging
import CastPluginHost
import CastlineConfig
import Glibc

/// `castline plugins list|inspect`: what the plugin host finds, loads, refuses and shadows.
struct PluginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins", abstract: "List, inspect and test plugins: features, declarations, refusals.",
        subcommands: [PluginsListCommand.self, PluginsInspectCommand.self, PluginsTestCommand.self])
}

/// Where plugins come from: the config (plugins.paths, disabled, config, allow lists) and --plugin-path.
struct PluginSourceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Config file (YAML). Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: "A folder or .so file to load plugins from (before CASTLINE_PLUGIN_PATH). Repeatable.")
    var pluginPath: [String] = []

    @Flag(name: .long, help: "JSON output.")
    var json = false

    /// The config (exit 2 on errors, as every command) and the inventory of plugins it implies. Quiet: the
    /// host's own log lines are not printed (the command prints every problem itself).
    func inventory() throws -> PluginInventory {
        let env = environment()
        let config = try CommandEnvironment.loadConfig(explicit: self.config, environment: env)
        return PluginInventory(config: config, pluginPath: pluginPath, environment: env,
                               logSystem: LogSystem(filter: LoggerFilter(minimumLevel: .none)))
    }
}

struct PluginsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Load every plugin on the search path and list them, the refused ones and shadowed features.",
        discussion: """
            Search order: --plugin-path, CASTLINE_PLUGIN_PATH, the config's plugins.paths, then next to the \
            binary. Each file is described and initialised in a child process first (castline plugin-scan); one \
            that crashes (its signal is shown) or hangs (past plugins.call_timeout) there is listed as refused. A feature's status: active, shadowed (another plugin's feature with the same id has a \
            higher rank), not allowed (its declarations are not in discovery.allowed_services or \
            channels.allowed_namespaces). RUNS says where each plugin would run: in castline's process (it             ships with castline, or plugins.in_process lists it) or isolated in a helper process. When a             castline run answers on its socket, its plugins' live states follow (loaded, isolated, restarting,             disabled, with the reason and the restarts). --json: {"plugins":[…],"problems":[…],"shadowed":[…],            "searchPath":[…],"daemon":[…]}.
            Exits 0 (problems are listed, not fatal); 2 when the config file has errors.
            """)

    @OptionGroup var options: PluginSourceOptions

    func run() async throws {
        let inventory = try options.inventory()
        let host = inventory.host
        host.loadAll()
        defer { host.shutdown() }
        // The running daemon's own view, when one answers.
        let daemon = DaemonClient.find(direct: false, apiSocket: nil, config: options.config)
            .flatMap { try? $0.client.send("GET", "/v1/plugins") }
            .flatMap { $0.status == 200 ? $0.json?["plugins"]?.array : nil }
        if options.json {
            var object: JSONObject = [
                "plugins": .array(host.plugins.map { plugin in
                    var entry = inventory.json(plugin)
                    entry.set("runs", .string(host.isolatedPlugin(plugin.id) == nil ? "in_process" : "isolated"))
                    return .object(entry)
                }),
                "problems": .array(host.problems.map(PluginInventory.json)),
                "shadowed": .array(inventory.shadowedJSON()),
                "searchPath": .array(inventory.searchPathJSON()),
            ]
            if let daemon { object.set("daemon", .array(daemon)) }
            printLine(JSONValue.object(object).serialized())
            return
        }
        for line in Self.text(inventory) { printLine(line) }
        if let daemon {
            printLine("")
            printLine("castline run:")
            var rows = [["ID", "STATE", "RESTARTS", "REASON"]]
            for plugin in daemon {
                rows.append([plugin["id"]?.string ?? "?", plugin["state"]?.string ?? "?", "\(plugin["restarts"]?.int ?? 0)",
                             plugin["reason"]?.string ?? "-"])
            }
            for line in formatTable(rows) { printLine("  " + line) }
        }
    }

    static func text(_ inventory: PluginInventory) -> [String] {
        let host = inventory.host
        var lines: [String] = []
        if host.plugins.isEmpty {
            lines.append("no plugin loaded")
        } else {
            var rows = [["ID", "VERSION", "FEATURES", "RUNS", "PATH", "SOURCE"]]
            for plugin in host.plugins {
                let declared = inventory.declaredFeatures(path: plugin.path)
                let features = (declared.isEmpty ? plugin.features : declared).map(inventory.featureText)
                rows.append([plugin.id, plugin.version, features.isEmpty ? "-" : features.joined(separator: ", "),
                             host.isolatedPlugin(plugin.id) == nil ? "in process" : "isolated",
                             plugin.path, inventory.sourceText(of: plugin.path)])
            }
            lines += formatTable(rows)
        }
        let problems = host.problems
        if !problems.isEmpty {
            lines.append("")
            lines.append("refused (\(problems.count)):")
            for p in problems { lines.append("  \(p.kind.rawValue): \(p.description)") }
        }
        let shadowed = host.shadowedFeatures
        if !shadowed.isEmpty {
            lines.append("")
            lines.append("shadowed (\(shadowed.count)):")
            for f in shadowed {
                let winner = host.feature(f.kind, id: f.id)
                lines.append("  \(f.kind):\(f.id) of \(f.pluginID) (rank \(f.rank)) loses to "
                             + (winner.map { "\($0.pluginID) (rank \($0.rank))" } ?? "another plugin"))
            }
        }
        lines.append("")
        lines.append("search path:")
        for case .object(let e) in inventory.searchPathJSON() {
            let exists = e["exists"]?.bool ?? false
            lines.append("  \(e["path"]?.string ?? "") (\(e["source"]?.string ?? ""))" + (exists ? "" : ": not found"))
        }
        return lines
    }
}

struct PluginsInspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show one plugin (by id, or a .so path) with every field, its declarations and whether the config allows them.",
        discussion: """
            By id: the plugin is looked for on the search path (as `plugins list`). By path (contains a "/" or \
            ends in .so): that file alone is loaded. Each file is first described and initialised in a child \
            process (castline plugin-scan): a plugin that crashes or hangs there is reported (status crashed, \
            with the signal, or timed_out, after plugins.call_timeout) and left out. Exits 1 when no plugin has \
            the id or the plugin failed to load (not a plugin, ABI mismatch, init failed, crashed, timed out); \
            0 otherwise (a disabled plugin is shown).
            """ + "\n" + CastlineExit.summary)

    @Argument(help: ArgumentHelp("A plugin id (json-sink) or the path of a plugin file.", valueName: "id-or-path"))
    var plugin: String

    @OptionGroup var options: PluginSourceOptions

    func run() async throws {
        let inventory = try options.inventory()
        let host = inventory.host
        defer { host.shutdown() }
        let byPath = plugin.contains("/") || plugin.hasSuffix(".so")
        var problems: [PluginLoadError]
        if byPath {
            host.load(plugin)
            problems = host.problems
        } else {
            host.loadAll()
            problems = host.problems.filter { $0.pluginID == plugin }
        }
        let loaded = host.plugins.first { byPath ? $0.path == plugin : $0.id == plugin }
        // A plugin whose init failed or that is disabled was opened: its descriptor can be read again.
        let opened = problems.first { [.initFailed, .disabled, .duplicate, .crashed, .timedOut].contains($0.kind) }
        let path = loaded?.path ?? opened?.path ?? (byPath ? plugin : nil)
        let declared = loaded != nil || opened != nil ? path.map(inventory.declaredFeatures) ?? [] : []
        var description: LoadedPlugin?
        if loaded == nil, let opened { description = host.declaredPlugin(atPath: opened.path) }
        let info = loaded ?? description
        let failed = loaded == nil && !(opened?.kind == .disabled)

        guard info != nil || !problems.isEmpty else {
            let ids = host.plugins.map(\.id).sorted()
            printError("castline: no plugin \"\(plugin)\" on the search path; loaded: " + (ids.isEmpty ? "none" : ids.joined(separator: ", ")))
            throw CastlineExit.failure
        }
        let status = loaded != nil ? "loaded"
            : [.disabled, .crashed, .timedOut].contains(opened?.kind) ? opened!.kind.rawValue : "failed"
        let pluginConfig = info.map { PluginInventory.pluginConfigs(inventory.config)[$0.id] ?? "{}" }
        if options.json {
            var o = info.map { inventory.json($0) } ?? ["path": .string(path ?? plugin)]
            o.set("status", .string(status))
            if let pluginConfig { o.set("config", (try? JSONValue.parse(pluginConfig)) ?? .string(pluginConfig)) }
            o.set("problems", .array(problems.map(PluginInventory.json)))
            printLine(JSONValue.object(o).serialized())
        } else {
            for line in text(info, declared: declared, status: status, config: pluginConfig, problems: problems, inventory: inventory) {
                printLine(line)
            }
        }
        if failed { throw CastlineExit.failure }
    }

    func text(_ info: LoadedPlugin?, declared: [PluginFeature], status: String, config: String?, problems: [PluginLoadError],
              inventory: PluginInventory) -> [String] {
        var rows: [[String]] = []
        if let info {
            rows += [["id:", info.id], ["version:", info.version], ["description:", info.summary], ["license:", info.license],
                     ["abi:", "\(PluginABI.major).\(info.abiMinor) (castline speaks \(PluginABI.major).\(PluginABI.minor))"],
                     ["path:", info.path], ["source:", inventory.sourceText(of: info.path)]]
        } else {
            rows.append(["path:", plugin])
        }
        rows.append(["status:", status])
        if let config { rows.append(["config:", config + (info.map { " (plugins.config.\($0.id))" } ?? "")]) }
        var lines = formatTable(rows)
        let features = declared.isEmpty ? info?.features ?? [] : declared
        if !features.isEmpty {
            lines.append("features:")
            for f in features {
                lines.append("  \(inventory.featureText(f))")
                let verdicts = DoctorChecks.declarationVerdicts(
                    kind: f.kind, declarations: f.declarations, allowedServices: Set(inventory.config.discovery.allowedServices),
                    allowedNamespaces: inventory.config.channels.permitted)
                let label = f.kind == .discovery ? "DNS-SD type" : f.kind == .channel ? "namespace" : "content type"
                for v in verdicts {
                    let key = f.kind == .discovery ? PluginHostConfiguration.allowedServicesKey : PluginHostConfiguration.allowedNamespacesKey
                    let verdict = f.kind == .mediaFormat ? "" : v.allowed ? "  ✔ allowed by \(key)"
                        : "  ✘ not allowed: add \"\(v.allowedForm)\" to \(key) in \(inventory.config.file == "<default>" ? "the config" : inventory.config.file)"
                    lines.append("    \(label) \(v.declaration)\(verdict)")
                }
                if f.declarations.isEmpty { lines.append("    declarations: none") }
            }
        }
        if !problems.isEmpty {
            lines.append("problems:")
            for p in problems { lines.append("  \(p.kind.rawValue): \(p.description)") }
        }
        return lines
    }
}

/// `castline plugin-host FILE` (hidden): the helper process an isolated plugin (`plugins.isolated`)
/// runs in (``IsolatedPlugin``). It talks to its parent on fd 3 only and ends when that closes.
struct PluginHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-host", abstract: "Run one plugin for castline in its own process (internal).", shouldDisplay: false)

    @Argument(help: "The plugin file.")
    var path: String
    @Option(name: .long, help: "The helper's descriptor limit (RLIMIT_NOFILE), from plugins.limits.open_files.")
    var openFiles: Int?
    @Option(name: .long, help: "plugins.limits.memory_mb: the parent kills the helper over it; a hard bound on its data (RLIMIT_DATA) at twice that plus 256 MiB catches a leak between its samples.")
    var memoryMB: Int?

    func run() throws {
        PluginHostChild.applyLimits(openFiles: openFiles, memoryMB: memoryMB)
        _exit(PluginHostChild.run(path: path))
    }
}

/// `castline plugin-scan FILE` (hidden): the child process in which every plugin file is first
/// described and initialised (``PluginScanner``). It talks to its parent on fd 3 only, and exits
/// without running the plugin's destructors.
struct PluginScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin-scan", abstract: "Describe and initialise one plugin for castline (internal).", shouldDisplay: false)

    @Argument(help: "The plugin file.")
    var path: String

    func run() throws {
        _exit(PluginScanChild.run(path: path))
    }
}
