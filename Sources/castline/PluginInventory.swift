import CastCore
import CastLogging
import CastPluginHost
import CastlineConfig
import Glibc

/// The plugins castline would load with a config (`plugins list/inspect`, `doctor`): the host
/// built as ``CommandEnvironment`` builds it (config paths, disabled ids, plugin configs,
/// `discovery.interfaces` handed to avahi-discovery, the allow lists), for every feature kind.
struct PluginInventory {
    let config: CastlineConfiguration
    let host: PluginHost
    let searchPath: PluginSearchPath
    /// The search-path entry each candidate file came from, by file path.
    let entries: [String: PluginSearchPath.Entry]

    init(config: CastlineConfiguration, pluginPath: [String], environment env: [String: String], logSystem: LogSystem) {
        self.config = config
        searchPath = PluginSearchPath(commandLine: pluginPath, environment: env, config: config.plugins.paths)
        var entries: [String: PluginSearchPath.Entry] = [:]
        for (path, entry) in searchPath.candidateFiles().files where entries[path] == nil { entries[path] = entry }
        self.entries = entries
        host = PluginHost(configuration: PluginHostConfiguration(
            searchPath: searchPath, allowedServiceTypes: Set(config.discovery.allowedServices),
            allowedNamespaces: config.channels.permitted, pluginConfigs: Self.pluginConfigs(config),
            disabledPlugins: Set(config.plugins.disabled), scanner: PluginScanner.castline(timeout: config.plugins.callTimeout)),
            logSystem: logSystem)
    }

    /// Each plugin's config as CommandEnvironment passes it (`discovery.interfaces` → avahi-discovery).
    static func pluginConfigs(_ config: CastlineConfiguration) -> [String: String] {
        var configs = config.plugins.configs
        if !config.discovery.interfaces.isEmpty, configs["avahi-discovery"] == nil {
            configs["avahi-discovery"] = JSONValue.object(["interfaces": .array(config.discovery.interfaces.map { .string($0) })]).serialized()
        }
        return configs
    }

    /// Every feature a plugin file declares, the refused ones too, as the scanner described it
    /// (never loaded into this process for that). Only for files the host has looked at.
    func declaredFeatures(path: String) -> [PluginFeature] {
        host.declaredPlugin(atPath: path)?.features ?? []
    }

    /// `default (/usr/lib/castline)` for a file found on the search path.
    func sourceText(of path: String) -> String {
        guard let entry = entries[path] else { return "named on the command line" }
        return "\(entry.source.rawValue) (\(entry.path))"
    }

    /// active | shadowed | not_allowed | unused (a feature of a plugin that did not load).
    func status(of feature: PluginFeature) -> String {
        func same(_ f: PluginFeature) -> Bool { f.kind == feature.kind && f.id == feature.id && f.pluginID == feature.pluginID }
        if host.features.contains(where: same) { return "active" }
        if host.shadowedFeatures.contains(where: same) { return "shadowed" }
        if !notAllowed(feature).isEmpty { return "not_allowed" }
        return "unused"
    }

    /// The declarations of `feature` the config does not allow.
    func notAllowed(_ feature: PluginFeature) -> [String] {
        DoctorChecks.declarationVerdicts(kind: feature.kind, declarations: feature.declarations,
                                         allowedServices: Set(config.discovery.allowedServices),
                                         allowedNamespaces: config.channels.permitted).filter { !$0.allowed }.map(\.declaration)
    }

    // MARK: JSON

    func json(_ plugin: LoadedPlugin) -> JSONObject {
        var o = JSONObject()
        o.set("id", .string(plugin.id))
        o.set("version", .string(plugin.version))
        o.set("description", .string(plugin.summary))
        o.set("license", .string(plugin.license))
        o.set("abiMinor", .int(Int64(plugin.abiMinor)))
        o.set("path", .string(plugin.path))
        if let entry = entries[plugin.path] {
            o.set("source", .string(entry.source.rawValue))
            o.set("folder", .string(entry.path))
        }
        let declared = declaredFeatures(path: plugin.path)
        o.set("features", .array((declared.isEmpty ? plugin.features : declared).map { .object(json($0)) }))
        return o
    }

    func json(_ feature: PluginFeature) -> JSONObject {
        var o: JSONObject = ["kind": .string(feature.kind.description), "id": .string(feature.id), "rank": .int(Int64(feature.rank)),
                             "declarations": .array(feature.declarations.map { .string($0) }), "status": .string(status(of: feature))]
        let refused = notAllowed(feature)
        if !refused.isEmpty {
            o.set("notAllowed", .array(refused.map { .string($0) }))
            o.set("allowKey", .string(feature.kind == .discovery ? PluginHostConfiguration.allowedServicesKey : PluginHostConfiguration.allowedNamespacesKey))
        }
        return o
    }

    static func json(_ problem: PluginLoadError) -> JSONValue {
        ["kind": .string(problem.kind.rawValue), "path": .string(problem.path),
         "pluginId": problem.pluginID.map { .string($0) } ?? .null, "reason": .string(problem.reason)]
    }

    /// Each shadowed feature with the one that won.
    func shadowedJSON() -> [JSONValue] {
        host.shadowedFeatures.map { f in
            let winner = host.feature(f.kind, id: f.id)
            return ["kind": .string(f.kind.description), "id": .string(f.id), "pluginId": .string(f.pluginID), "rank": .int(Int64(f.rank)),
                    "winner": winner.map { .string($0.pluginID) } ?? .null, "winnerRank": winner.map { .int(Int64($0.rank)) } ?? .null]
        }
    }

    func searchPathJSON() -> [JSONValue] {
        searchPath.entries.map { e in
            var st = stat()
            return ["path": .string(e.path), "source": .string(e.source.rawValue), "exists": .bool(stat(e.path, &st) == 0)]
        }
    }

    /// `discovery:avahi rank 0`, with its status when not active.
    func featureText(_ feature: PluginFeature) -> String {
        let status = status(of: feature)
        return "\(feature.kind):\(feature.id) rank \(feature.rank)" + (status == "active" ? "" : " (\(status.replacingOccurrences("_", " ")))")
    }
}

extension String {
    /// Every `target` replaced (no Foundation).
    func replacingOccurrences(_ target: Character, _ replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}

/// Pads columns to their widest cell (the last column is not padded). Pure.
func formatTable(_ rows: [[String]]) -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    var widths = [Int](repeating: 0, count: columns)
    for row in rows {
        for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
    }
    return rows.map { row in
        row.enumerated().map { i, cell in
            i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
        }.joined(separator: "  ")
    }
}
