import ArgumentParser
import CastlineJobs
import CastCore
import CastLogging
import CastPluginHost
import CastlineConfig
import CastlineDaemon
import CastlineLocalMedia
import Glibc

/// `castline config check FILE…`: validates config files without running them.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check configuration files.", subcommands: [ConfigCheckCommand.self])
}

struct ConfigCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check config files: YAML syntax, keys, types, log rules, globs, plugin sinks.",
        discussion: """
            Prints every problem as FILE:LINE:COLUMN: error|warning: message (unknown keys list the \
            allowed ones) and exits 2 when a file has an error; prints "FILE: ok (…)" otherwise.
            Warnings do not fail the check: a job's local media file that is missing or unreadable, \
            or a playlist folder that cannot be listed or holds no media files (checked as the user \
            running the check), and, when discovery finds only the devices \
            under devices: (discovery.autostart: false or discovery.providers: [static]), a job \
            device glob that matches none of them.
            Also loads the plugins the file would load (plugins.paths, CASTLINE_PLUGIN_PATH, next to \
            the binary) to check that each logging sink type exists; --no-plugins skips that.
            """ + "\n" + CastlineExit.summary)

    @Argument(help: "Config files (YAML).")
    var files: [String]
    @Flag(name: .long, help: "One JSON object per file: {file, ok, diagnostics:[{file, line, column, severity, message}]}.")
    var json = false
    @Flag(name: .long, help: "Do not load plugins (only the file itself is checked).")
    var noPlugins = false
    @Option(name: .long, help: "A folder or .so file to load plugins from. Repeatable.")
    var pluginPath: [String] = []

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("config check needs at least one FILE") }
    }

    func run() async throws {
        var failed = false
        for file in files {
            var config: CastlineConfiguration?
            var diagnostics: [ConfigDiagnostic]
            do {
                let loaded = try CastlineConfiguration.load(path: file)
                config = loaded.0
                diagnostics = loaded.warnings + loaded.0.referenceWarnings(localFileProblem: Self.localFileProblem(_:extensions:)) + loaded.0.fieldWarnings()
                if !noPlugins { diagnostics += checkPlugins(loaded.0) }
            } catch {
                diagnostics = error.diagnostics
                if let partial = error.partial {
                    diagnostics += partial.referenceWarnings(localFileProblem: Self.localFileProblem(_:extensions:)) + partial.fieldWarnings()
                    if !noPlugins { diagnostics += checkPlugins(partial) }
                }
            }
            diagnostics.sort { ($0.mark.line, $0.mark.column) < ($1.mark.line, $1.mark.column) }
            let ok = config != nil && !diagnostics.contains { $0.severity == .error }
            if !ok { failed = true }
            if json {
                let entries: [JSONValue] = diagnostics.map {
                    ["file": .string($0.file), "line": .int(Int64($0.mark.line)), "column": .int(Int64($0.mark.column)),
                     "severity": .string($0.severity.rawValue), "message": .string($0.message)]
                }
                printLine(JSONValue.object(["file": .string(file), "ok": .bool(ok), "diagnostics": .array(entries)]).serialized())
                continue
            }
            for diagnostic in diagnostics { printError(diagnostic.description) }
            if ok, let config {
                printLine("\(file): ok (\(config.devices.count) device(s), \(config.jobs.count) job(s), \(config.logging.sinks.count) log sink(s))")
            }
        }
        if failed { throw CastlineExit.configError }
    }

    /// Why a job's local media cannot be served, or nil: a file is opened as `castline run`
    /// opens it; a folder is a playlist, listed as the job lists it (its media files, only
    /// `extensions` when given), and must hold some. The daemon may run as another user
    /// (systemd's DynamicUser): the text says who checked.
    static func localFileProblem(_ path: String, extensions: [String]?) -> String? {
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            do {
                let items = try Playlist.folderItems(path, extensions: extensions.map(Set.init))
                guard items.isEmpty else { return nil }
                let which = extensions.map { "(\($0.joined(separator: ", ")))" } ?? "(the usual media extensions)"
                return "the folder \(path) holds no media files \(which) (checked as uid \(geteuid()))"
            } catch {
                return "\(error) (checked as uid \(geteuid()))"
            }
        }
        do {
            _ = try LocalMediaFile.open(path)
            return nil
        } catch {
            return "cannot read \(path) (checked as uid \(geteuid())): \(error)"
        }
    }

    /// Sink types must name a log-sink feature of a loadable plugin; plugin configs should name a plugin.
    func checkPlugins(_ config: CastlineConfiguration) -> [ConfigDiagnostic] {
        let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .none))
        let host = PluginHost(configuration: PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: pluginPath, environment: environment(), config: config.plugins.paths),
            allowedServiceTypes: Set(config.discovery.allowedServices), allowedNamespaces: config.channels.permitted,
            pluginConfigs: config.plugins.configs, disabledPlugins: Set(config.plugins.disabled),
            scanner: PluginScanner.castline(timeout: config.plugins.callTimeout)), logSystem: logSystem)
        host.loadAll()
        defer { host.shutdown() }
        var found: [ConfigDiagnostic] = []
        let sinks = host.features(of: .logSink).map(\.id)
        for sink in config.logging.sinks where !sinks.contains(sink.type) {
            found.append(ConfigDiagnostic(file: config.file, mark: sink.mark, message:
                "logging sink type \"\(sink.type)\" is not provided by any loaded plugin; available: "
                + (sinks.isEmpty ? "none (no log-sink plugin found)" : sinks.sorted().joined(separator: ", "))))
        }
        let ids = Set(host.plugins.map(\.id)).union(config.plugins.disabled)
        for (id, mark) in config.plugins.marks.sorted(by: { $0.value.line < $1.value.line }) where !ids.contains(id) {
            found.append(ConfigDiagnostic(file: config.file, mark: mark, severity: .warning, message:
                "plugins.config.\(id): no loaded plugin has this id; loaded: " + host.plugins.map(\.id).sorted().joined(separator: ", ")))
        }
        return found
    }
}
