import CastCore
import CastPluginHost
import CastlineConfig

/// One `castline doctor` finding: a name, a verdict, what was seen and, when not ok, what to do.
struct DoctorCheck: Sendable, Equatable {
    enum Status: String, Sendable { case ok, warning, error, skipped }

    var name: String
    var status: Status
    /// What was found; may span lines (continuation lines are indented when printed).
    var detail: String
    /// What to do about it (shown when the status is not ok).
    var fix: String?

    init(_ name: String, _ status: Status, _ detail: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }

    var symbol: String {
        switch status {
        case .ok: return "✔"
        case .warning: return "!"
        case .error: return "✘"
        case .skipped: return "-"
        }
    }

    /// `✔ name: detail`, then an indented `fix:` line when not ok.
    var lines: [String] {
        let detailLines = detail.split(separator: "\n", omittingEmptySubsequences: false)
        var out = ["\(symbol) \(name): \(detailLines.first ?? "")"] + detailLines.dropFirst().map { "    \($0)" }
        if status != .ok, let fix {
            let fixLines = fix.split(separator: "\n", omittingEmptySubsequences: false)
            out.append("  fix: \(fixLines.first ?? "")")
            out += fixLines.dropFirst().map { "    \($0)" }
        }
        return out
    }

    var json: JSONValue {
        ["name": .string(name), "status": .string(status.rawValue), "detail": .string(detail), "fix": fix.map { .string($0) } ?? .null]
    }

    /// `{"checks":[…],"ok":bool}`.
    static func report(_ checks: [DoctorCheck]) -> JSONValue {
        ["checks": .array(checks.map(\.json)), "ok": .bool(!hasError(checks))]
    }

    static func hasError(_ checks: [DoctorCheck]) -> Bool { checks.contains { $0.status == .error } }
}

/// A plugin feature as plain values (what the declaration checks need; testable without a plugin).
struct DeclaredFeature: Sendable, Equatable {
    var pluginID: String
    var kind: PluginFeatureKind
    var id: String
    var declarations: [String]

    init(pluginID: String, kind: PluginFeatureKind, id: String, declarations: [String]) {
        self.pluginID = pluginID
        self.kind = kind
        self.id = id
        self.declarations = declarations
    }

    init(_ f: PluginFeature) { self.init(pluginID: f.pluginID, kind: f.kind, id: f.id, declarations: f.declarations) }
}

/// The checks of `castline doctor`. The functions that only look at data are pure (unit-testable);
/// the ones that look at the system gather facts for them (`DoctorChecks+System.swift`,
/// `DoctorChecks+Discovery.swift`).
enum DoctorChecks {
    // MARK: Config (pure)

    /// The config file every command reads: `--config`, `$CASTLINE_CONFIG`, then
    /// `$XDG_CONFIG_HOME` (or `~/.config`)`/castline/castline.yaml` when it exists.
    /// The config file every command reads: `--config`, `$CASTLINE_CONFIG`, then
    /// `$XDG_CONFIG_HOME` or `~/.config` `/castline/castline.yaml` when it exists.
    static func configPath(explicit: String?, environment env: [String: String],
                           exists: (String) -> Bool) -> (path: String?, source: String) {
        if let explicit { return (explicit, "--config") }
        if let path = env["CASTLINE_CONFIG"], !path.isEmpty { return (path, "CASTLINE_CONFIG") }
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? env["HOME"].map { "\($0)/.config" }
        guard let base else { return (nil, "no $HOME") }
        let path = "\(base)/castline/castline.yaml"
        return exists(path) ? (path, "default location") : (nil, path)
    }

    /// The verdict on loading the config; `outcome` nil when there is no file (`source` then says where it was looked for).
    static func configCheck(path: String?, source: String,
                            outcome: Result<(config: CastlineConfiguration, warnings: [ConfigDiagnostic]), ConfigErrors>?) -> DoctorCheck {
        guard let path, let outcome else {
            return DoctorCheck("config", .ok, "no config file (looked for \(source)): the built-in defaults")
        }
        switch outcome {
        case .failure(let errors):
            return DoctorCheck("config", .error, "\(path) (from \(source)):\n" + errors.diagnostics.map(\.description).joined(separator: "\n"),
                               fix: "correct the file (`castline config check \(path)`); until then every command exits 2")
        case .success(let (config, warnings)):
            let summary = "\(path) (from \(source)): \(config.devices.count) device(s), \(config.jobs.count) job(s), \(config.logging.sinks.count) log sink(s)"
            guard !warnings.isEmpty else { return DoctorCheck("config", .ok, summary) }
            return DoctorCheck("config", .warning, summary + "\n" + warnings.map(\.description).joined(separator: "\n"),
                               fix: "see the warnings (each names the line)")
        }
    }

    // MARK: Plugins (pure)

    /// A PluginFileSafety sentence split at its `; run …` advice.
    static func splitFix(_ problem: String) -> (detail: String, fix: String?) {
        guard let range = problem.firstRange(of: "; run ") else { return (problem, nil) }
        return (String(problem[..<range.lowerBound]), String(problem[problem.index(range.lowerBound, offsetBy: 2)...]))
    }

    /// One check per search-path entry; one error per unsafe file or folder.
    static func pluginFolderChecks(_ folders: [PluginFolderFacts]) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        for folder in folders {
            let name = "plugin path \(folder.path)"
            if !folder.exists {
                if folder.source == PluginSearchPath.Source.defaultFolder.rawValue {
                    checks.append(DoctorCheck(name, .skipped, "not present (an optional default folder)"))
                } else {
                    checks.append(DoctorCheck(name, .warning, "from \(folder.source): does not exist or is not readable",
                                              fix: "create it, or remove it from \(settingName(folder.source))"))
                }
                continue
            }
            let what = folder.isFile ? "a plugin file" : "\(folder.pluginFiles.count) plugin file(s)"
            checks.append(DoctorCheck(name, .ok, "from \(folder.source): \(what)"))
            var seen: Set<String> = []
            for finding in folder.unsafe where seen.insert(finding.problem).inserted {
                let (detail, fix) = splitFix(finding.problem)
                checks.append(DoctorCheck("plugin file safety", finding.isFolderOnly ? .warning : .error,
                                          detail + (finding.isFolderOnly ? " (plugins added there would be refused)" : "; castline refuses \(finding.path)"),
                                          fix: fix ?? "make the file and its folder writable only by root or you"))
            }
        }
        return checks
    }

    static func settingName(_ source: String) -> String {
        switch source {
        case PluginSearchPath.Source.commandLine.rawValue: return "--plugin-path"
        case PluginSearchPath.Source.environment.rawValue: return "CASTLINE_PLUGIN_PATH"
        case PluginSearchPath.Source.config.rawValue: return "plugins.paths in the config"
        default: return source
        }
    }

    /// The loaded count, then one line per refusal (refusals by file safety and by the allow lists
    /// have their own checks).
    static func pluginChecks(loaded: [String], problems: [PluginLoadError]) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if loaded.isEmpty {
            checks.append(DoctorCheck("plugins", .warning, "no plugin loaded: no mDNS discovery, no plugin log sinks",
                                      fix: "install the libCastlinePlugin*.so files next to castline, or name their folder with --plugin-path / CASTLINE_PLUGIN_PATH"))
        } else {
            checks.append(DoctorCheck("plugins", .ok, "\(loaded.count) loaded: " + loaded.joined(separator: ", ")))
        }
        for p in problems where p.kind != .notAllowed && p.kind != .unsafeFile {
            let name = "plugin \(p.pluginID ?? p.path)"
            switch p.kind {
            case .disabled: checks.append(DoctorCheck(name, .skipped, "disabled by the config (plugins.disabled)"))
            case .duplicate: checks.append(DoctorCheck(name, .warning, p.reason, fix: "remove the other copy (the first on the search path wins)"))
            default: checks.append(DoctorCheck(name, .error, "\(p.path): \(p.reason)", fix: pluginFix(p)))
            }
        }
        return checks
    }

    static func pluginFix(_ p: PluginLoadError) -> String {
        switch p.kind {
        case .openFailed: return "check that it is a shared library for this system; `ldd \(p.path)` shows missing libraries"
        case .missingEntry: return "it is not a castline plugin: move it out of the plugin folder"
        case .abiMajor, .abiMinor: return "rebuild the plugin against this castline's castline_plugin.h, or use a matching castline"
        case .badDescriptor, .undeclared: return "rebuild the plugin; if it persists, report it to the plugin's author"
        case .initFailed: return "check plugins.config.\(p.pluginID ?? "<id>") in the config (the plugin's options), or disable it with plugins.disabled"
        default: return "see the reason"
        }
    }

    /// Each declaration of a discovery feature (DNS-SD type, a subtype counting as its parent) or a
    /// channel feature (namespace) against the allow list; media-format content types are always allowed.
    static func declarationVerdicts(kind: PluginFeatureKind, declarations: [String], allowedServices: Set<String>,
                                    allowedNamespaces: Set<String>) -> [(declaration: String, allowed: Bool, allowedForm: String)] {
        declarations.map { d in
            switch kind {
            case .discovery:
                let base = baseServiceType(d)
                return (d, allowedServices.contains(base) || allowedServices.contains(d), base)
            case .channel: return (d, allowedNamespaces.contains(d), d)
            case .mediaFormat, .logSink, .bridge: return (d, true, d)
            }
        }
    }

    /// `_CC1AD845._sub._googlecast._tcp` → `_googlecast._tcp` (as the plugin host counts it).
    static func baseServiceType(_ type: String) -> String {
        let parts = type.split(separator: ".", omittingEmptySubsequences: false)
        if let sub = parts.firstIndex(of: "_sub"), sub > 0, sub + 1 < parts.count { return parts[(sub + 1)...].joined(separator: ".") }
        return type
    }

    /// Discovery and channel declarations against `discovery.allowed_services` / `channels.allowed_namespaces`.
    /// A refused discovery feature is an error (discovery is why castline runs); a refused channel a
    /// warning (the example channel plugins ship refused until their namespace is allowed).
    static func declarationChecks(_ features: [DeclaredFeature], allowedServices: Set<String>, allowedNamespaces: Set<String>,
                                  configFile: String) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        for f in features where f.kind == .discovery || f.kind == .channel {
            let name = "declarations \(f.pluginID)/\(f.id)"
            let verdicts = declarationVerdicts(kind: f.kind, declarations: f.declarations, allowedServices: allowedServices, allowedNamespaces: allowedNamespaces)
            let refused = verdicts.filter { !$0.allowed }
            let verb = f.kind == .discovery ? "browses" : "uses"
            if refused.isEmpty {
                checks.append(DoctorCheck(name, .ok, "\(f.kind) \(verb) \(f.declarations.joined(separator: ", ")): allowed"))
                continue
            }
            let key = f.kind == .discovery ? PluginHostConfiguration.allowedServicesKey : PluginHostConfiguration.allowedNamespacesKey
            let values = Array(Set(refused.map(\.allowedForm))).sorted()
            checks.append(DoctorCheck(name, f.kind == .discovery ? .error : .warning,
                                      "\(f.kind) \(verb) \(refused.map(\.declaration).joined(separator: ", ")), not in \(key): the feature is refused",
                                      fix: "add \(values.map { "\"\($0)\"" }.joined(separator: ", ")) to \(key) in \(configFile == "<default>" ? "the config" : configFile)"
                                          + " (or list \(f.pluginID) under plugins.disabled)"))
        }
        if checks.isEmpty { checks.append(DoctorCheck("declarations", .skipped, "no discovery or channel feature loaded")) }
        return checks
    }
}

/// One search-path entry as found on disk.
struct PluginFolderFacts: Sendable, Equatable {
    struct Finding: Sendable, Equatable {
        var path: String
        /// PluginFileSafety's sentence (ends with `; run …`).
        var problem: String
        /// About a folder with no plugin file yet (nothing is refused today).
        var isFolderOnly = false
    }

    var path: String
    /// PluginSearchPath.Source raw value.
    var source: String
    var exists: Bool
    var isFile = false
    var pluginFiles: [String] = []
    var unsafe: [Finding] = []
}
