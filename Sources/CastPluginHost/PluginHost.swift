internal import CCastPluginABI
import CastCore
import CastLogging
import Dispatch
import Synchronization

/// Finds, checks, initialises and registers plugins, then hands out their features as discovery
/// providers, channels, media-format probes and log sinks.
///
/// With a ``PluginHostConfiguration/scanner``, each file is first described and initialised in a
/// child process (``PluginScanner``): a plugin that crashes or hangs there is refused
/// (`crashed`, `timed_out`) without ever being loaded into this process.
///
/// A broken plugin never stops the host: every refusal is one error line (class `PluginHost`,
/// fields `path`, `plugin`, `problem`) and an entry in ``problems``; the host goes on with the
/// rest. Thread-safe.
public final class PluginHost: Sendable {
    package let configuration: PluginHostConfiguration
    let logSystem: LogSystem
    let log: Logger
    private let state = Mutex(State())

    private struct State {
        var loaded = false
        var plugins: [LoadedPlugin] = []
        var features: [PluginFeature] = []
        var shadowed: [PluginFeature] = []
        var problems: [PluginLoadError] = []
        var contexts: [String: PluginHostContext] = [:]
        /// What the scanner described, by file path.
        var described: [String: LoadedPlugin] = [:]
        /// The helper processes of isolated plugins, by plugin id.
        var isolated: [String: IsolatedPlugin] = [:]
        /// Features taken out of service at run time (their plugin overran a bound), by "kind:id".
        var disabledFeatures: [String: PluginLoadError] = [:]
        /// The features each plugin disabled at run time had, to bring back (SIGHUP).
        var disabledPlugins: [String: [PluginFeature]] = [:]
        /// Which channel feature declares each namespace, also while it is disabled.
        var channelOwners: [String: PluginFeature] = [:]
    }

    public init(configuration: PluginHostConfiguration, logSystem: LogSystem = .shared) {
        self.configuration = configuration
        self.logSystem = logSystem
        log = Logger(class: "PluginHost", system: logSystem)
    }

    /// Initialised plugins, in search order.
    package var plugins: [LoadedPlugin] { state.withLock { $0.plugins } }
    /// Usable features (duplicates resolved by rank), in search order.
    package var features: [PluginFeature] { state.withLock { $0.features } }
    /// Features that lost to another with the same kind and id.
    package var shadowedFeatures: [PluginFeature] { state.withLock { $0.shadowed } }
    /// Everything refused, in the order it happened.
    package var problems: [PluginLoadError] { state.withLock { $0.problems } }

    package func features(of kind: PluginFeatureKind) -> [PluginFeature] { features.filter { $0.kind == kind } }

    package func feature(_ kind: PluginFeatureKind, id: String) -> PluginFeature? {
        features.first { $0.kind == kind && $0.id == id }
    }

    /// The bound on each callback into a feature instance (``PluginHostConfiguration/callTimeout``).
    package var callTimeout: Double { configuration.callTimeout }

    /// Takes a plugin out of service after one of its instances overran a callback's bound: its
    /// features are no longer handed out (instances already open go on until they are closed)
    /// and `error` joins ``problems``. The caller logged the error record that names it.
    func disable(pluginID: String, _ error: PluginLoadError) {
        state.withLock { s in
            let removed = s.features.filter { $0.pluginID == pluginID }
            for f in removed { s.disabledFeatures["\(f.kind):\(f.id)"] = error }
            if !removed.isEmpty { s.disabledPlugins[pluginID, default: []] += removed }
            s.features.removeAll { $0.pluginID == pluginID }
            s.problems.append(error)
        }
    }

    /// Gives every plugin disabled at run time (an overrun callback) another chance, as
    /// `castline run` does on SIGHUP: its features are handed out again, to new instances (the
    /// call that overran may still hold its thread). Returns the plugin ids brought back.
    @discardableResult
    package func reenableDisabled() -> [String] {
        let back = state.withLock { s -> [String] in
            let ids = s.disabledPlugins.keys.sorted()
            for id in ids {
                let features = s.disabledPlugins.removeValue(forKey: id) ?? []
                for f in features { s.disabledFeatures["\(f.kind):\(f.id)"] = nil }
                s.features += features
            }
            return ids
        }
        for id in back {
            log.info("plugin \(id), disabled after overrunning a callback's bound, is enabled again", ["plugin": .string(id)])
        }
        return back
    }

    /// Whether a channel feature's namespace can be used now, or why not.
    package enum ChannelAvailability: Sendable, Equatable {
        case available
        case unavailable(String)
    }

    /// The channel feature that declares `namespace` (also while it is disabled or its helper
    /// restarts), and whether it can be used now; nil when no loaded plugin declares it.
    package func channelOwner(ofNamespace namespace: String) -> (feature: PluginFeature, availability: ChannelAvailability)? {
        let (owner, problem) = state.withLock { s -> (PluginFeature?, PluginLoadError?) in
            guard let owner = s.channelOwners[namespace] else { return (nil, nil) }
            return (owner, s.disabledFeatures["\(owner.kind):\(owner.id)"])
        }
        guard let owner else { return nil }
        if let problem { return (owner, .unavailable("plugin \(owner.pluginID) is disabled: \(problem.reason)")) }
        if let helper = isolatedPlugin(owner.pluginID), helper.isRestarting {
            let why = helper.lastProblem.map { " after \($0)" } ?? ""
            return (owner, .unavailable("plugin \(owner.pluginID)'s helper process is restarting\(why)"))
        }
        return (owner, .available)
    }

    /// Each loaded plugin as `plugins list`, `GET /v1/plugins` and `/metrics` show it.
    package struct RunState: Sendable, Equatable {
        package var id: String
        package var path: String
        package var version: String
        /// `loaded` (in castline's process), `isolated` (in its helper process), `restarting`
        /// (its helper is down and being restarted) or `disabled` (after an overrun; SIGHUP retries).
        package var state: String
        package var reason: String?
        package var restarts: Int
        package var helperPID: Int32?
        package var features: [String]
    }

    package var runStates: [RunState] {
        let (plugins, disabled, isolated) = state.withLock { s in (s.plugins, s.disabledPlugins, s.isolated) }
        return plugins.map { plugin in
            var run = RunState(id: plugin.id, path: plugin.path, version: plugin.version, state: "loaded", reason: nil, restarts: 0,
                               helperPID: nil, features: (plugin.features + (disabled[plugin.id] ?? [])).map { "\($0.kind):\($0.id)" })
            if let helper = isolated[plugin.id] {
                run.restarts = helper.restartCount
                run.helperPID = helper.helperPID
                run.state = helper.isRestarting ? "restarting" : "isolated"
                run.reason = helper.lastProblem
            }
            if disabled[plugin.id] != nil {
                run.state = "disabled"
                run.reason = runtimeProblem(forPlugin: plugin.id)?.reason
            }
            return run
        }
    }

    private func runtimeProblem(forPlugin id: String) -> PluginLoadError? {
        state.withLock { s in s.disabledFeatures.values.first { $0.pluginID == id } }
    }

    /// Why the feature was taken out of service at run time, nil if it was not.
    func runtimeProblem(_ kind: PluginFeatureKind, id: String) -> PluginLoadError? {
        state.withLock { $0.disabledFeatures["\(kind):\(id)"] }
    }

    /// The file a loaded plugin came from ("" if unknown).
    func path(ofPlugin pluginID: String) -> String {
        state.withLock { s in s.plugins.first { $0.id == pluginID }?.path ?? "" }
    }

    /// Loads every plugin on the search path once. Later calls return at once.
    public func loadAll() {
        let first = state.withLock { s -> Bool in
            defer { s.loaded = true }
            return !s.loaded
        }
        guard first else { return }
        let (files, missing) = configuration.searchPath.candidateFiles()
        for entry in missing {
            log.warning("plugin path \(entry.path) (from \(entry.source.rawValue)) does not exist or is not readable",
                        ["path": .string(entry.path), "source": .string(entry.source.rawValue)])
        }
        // The safety check first (an unsafe file is never opened, not even by the scanner), then
        // every file's scan starts at once, each in its own child; they are read in search order.
        var pending: [(path: String, scan: PluginScan?)] = []
        for (path, _) in files {
            if let error = safetyProblem(path) {
                refuse(error)
                continue
            }
            pending.append((path, configuration.scanner?.start(path)))
        }
        for (path, scan) in pending {
            load(path, scan: scan)
        }
        resolveDuplicates()
        let summary = state.withLock { s in (s.plugins.count, s.features.count, s.problems.count) }
        log.info("plugins loaded", ["plugins": .int(summary.0), "features": .int(summary.1), "refused": .int(summary.2)])
    }

    /// Loads one file directly (tests, `plugins inspect`). Returns the problem, if any.
    @discardableResult
    package func load(_ path: String, source: PluginSearchPath.Source = .commandLine) -> PluginLoadError? {
        if let error = safetyProblem(path) {
            refuse(error)
            return error
        }
        return load(path, scan: configuration.scanner?.start(path))
    }

    private func safetyProblem(_ path: String) -> PluginLoadError? {
        guard configuration.checkFileSafety, let problem = PluginFileSafety.problem(with: path) else { return nil }
        return PluginLoadError(.unsafeFile, path: path, "refused: " + problem)
    }

    /// Loads a file that passed the safety check: in this process, or (with a scan) once the
    /// scanner described it and ran its init without a crash or an overrun.
    @discardableResult
    private func load(_ path: String, scan: PluginScan?) -> PluginLoadError? {
        guard let scan else {
            switch PluginLoader.load(path, checkSafety: false) {
            case .failure(let error):
                refuse(error)
                return error
            case .success(let plugin):
                return admit(plugin)
            }
        }
        defer { scan.finish() }
        switch scan.describe() {
        case .failure(let error):
            refuse(error)
            return error
        case .success(let described):
            state.withLock { $0.described[path] = described }
            return admit(described) { plugin, config in
                if let error = scan.initialise(pluginID: plugin.id, config: config) { return .failure(error) }
                if self.runsIsolated(plugin) { return self.isolate(plugin, config: config) }
                return PluginLoader.load(path, checkSafety: false)
            }
        }
    }

    /// Whether `plugin` runs in a helper process: when the config says so (`plugins.isolated`),
    /// or when it does not ship with castline and the config does not let it in
    /// (`plugins.in_process`).
    func runsIsolated(_ plugin: LoadedPlugin) -> Bool {
        if configuration.isolatedPlugins.contains(plugin.id) { return true }
        if configuration.inProcessPlugins.contains(plugin.id) { return false }
        return !PluginSearchPath.isFirstParty(plugin.path)
    }

    /// Starts `plugin` in its helper process: its channels, media formats and log sinks are
    /// proxied there; a discovery feature is refused (one error each).
    private func isolate(_ plugin: LoadedPlugin, config: String) -> Result<LoadedPlugin, PluginLoadError> {
        guard let executable = configuration.scanner?.executable else {
            return .failure(PluginLoadError(.openFailed, path: plugin.path, pluginID: plugin.id, "cannot be isolated: no castline executable to run it in"))
        }
        let isolated = IsolatedPlugin(path: plugin.path, pluginID: plugin.id, config: config, executable: executable,
                                      bound: configuration.callTimeout, limits: configuration.limits, logSystem: logSystem)
        switch isolated.start() {
        case .failure(let error):
            return .failure(error)
        case .success(let described):
            var features: [PluginFeature] = []
            for f in described.features {
                guard f.kind != .discovery, f.kind != .bridge else {
                    let why = configuration.isolatedPlugins.contains(plugin.id)
                        ? "plugins.isolated lists it" : "it does not ship with castline, so it runs isolated"
                    refuse(PluginLoadError(.notAllowed, path: plugin.path, pluginID: plugin.id,
                        "feature \(f.id) (\(f.kind)) refused: \(why), and an isolated plugin runs channels, media formats and log sinks only; "
                        + "to trust it with castline's own process, add \(plugin.id) to plugins.in_process"))
                    continue
                }
                features.append(PluginFeature(pluginID: f.pluginID, kind: f.kind, id: f.id, rank: f.rank, declarations: f.declarations,
                                              vtable: .isolated(isolated), userdata: PluginUserData(pointer: nil)))
            }
            state.withLock { $0.isolated[plugin.id] = isolated }
            log.info("plugin \(plugin.id) runs in a helper process (castline plugin-host, pid \(isolated.helperPID ?? 0))",
                     ["plugin": .string(plugin.id), "path": .string(plugin.path), "helperPid": .int(Int(isolated.helperPID ?? 0))])
            return .success(LoadedPlugin(path: described.path, id: described.id, version: described.version, summary: described.summary,
                                         license: described.license, abiMinor: described.abiMinor, features: features,
                                         refusedFeatures: described.refusedFeatures, entry: PluginEntryPoints(initialize: nil, deinitialize: nil)))
        }
    }

    /// The helper process of an isolated plugin, nil when it runs in this process.
    package func isolatedPlugin(_ pluginID: String) -> IsolatedPlugin? { state.withLock { $0.isolated[pluginID] } }

    /// What a plugin file declares: as the scanner described it, or (without a scanner) as
    /// loading it in this process reads it. nil when it could not be described. For listings:
    /// the features carry no vtable when they come from the scanner.
    package func declaredPlugin(atPath path: String) -> LoadedPlugin? {
        if let described = state.withLock({ $0.described[path] }) { return described }
        guard configuration.scanner == nil else { return nil }
        return try? PluginLoader.load(path, checkSafety: false).get()
    }

    /// Registers `candidate` unless it is a duplicate, disabled, of no kind this run uses;
    /// refuses the features the config does not allow; runs its `init`. A candidate known from
    /// a description only is made real by `materialise` (its init in the scanner, then the load
    /// into this process) once everything else allowed it.
    private func admit(_ candidate: LoadedPlugin,
                       materialise: ((LoadedPlugin, String) -> Result<LoadedPlugin, PluginLoadError>)? = nil) -> PluginLoadError? {
        for problem in candidate.refusedFeatures { refuse(problem) }
        if let existing = state.withLock({ s in s.plugins.first { $0.id == candidate.id } }) {
            let error = PluginLoadError(.duplicate, path: candidate.path, pluginID: candidate.id,
                                        "skipped: a plugin with this id was already loaded from \(existing.path) (earlier in the search path)")
            log.warning(error.description, ["path": .string(candidate.path), "plugin": .string(candidate.id), "problem": "duplicate"])
            state.withLock { $0.problems.append(error) }
            return error
        }
        if configuration.disabledPlugins.contains(candidate.id) {
            let error = PluginLoadError(.disabled, path: candidate.path, pluginID: candidate.id, "disabled by the config")
            log.info(error.description, ["path": .string(candidate.path), "plugin": .string(candidate.id)])
            state.withLock { $0.problems.append(error) }
            return error
        }
        let wanted = candidate.features.filter { configuration.featureKinds.contains($0.kind) }
        guard !wanted.isEmpty || candidate.features.isEmpty else {
            log.debug("plugin \(candidate.id) skipped: no feature of the kinds this run uses", ["path": .string(candidate.path), "plugin": .string(candidate.id)])
            return nil
        }
        var allowed: [PluginFeature] = []
        for feature in wanted {
            if let error = policyProblem(feature, path: candidate.path) { refuseByPolicy(error) } else { allowed.append(feature) }
        }
        let config = configuration.pluginConfigs[candidate.id] ?? "{}"
        var candidate = candidate
        if let materialise {
            switch materialise(candidate, config) {
            case .failure(let error):
                refuse(error)
                return error
            case .success(let real):
                candidate = real
                allowed = allowed.compactMap { a in real.features.first { $0.kind == a.kind && $0.id == a.id } }
            }
        }
        let context = PluginHostContext.register(pluginID: candidate.id, featureID: nil, role: .plugin, logSystem: logSystem)
        if let initialize = candidate.entry.initialize {
            let errorText = PluginErrorText()
            let entry = EntryCall(initialize: initialize, deinitialize: nil)
            let status = Mutex<Int32>(0)
            guard bounded({ status.withLock { $0 = config.withCString { entry.initialize!(HostServices.table, context.pointer, $0, errorText.buffer) } } }) else {
                context.unregister()
                let error = PluginLoadError(.timedOut, path: candidate.path, pluginID: candidate.id,
                    "disabled: its init did not return within \(PluginScan.seconds(configuration.callTimeout)) (plugins.call_timeout)")
                refuse(error)
                return error
            }
            let rc = status.withLock { $0 }
            if rc != 0 {
                context.unregister()
                let error = PluginLoadError(.initFailed, path: candidate.path, pluginID: candidate.id,
                                            "disabled: init failed (status \(rc)): \(errorText.text ?? "no reason given")")
                refuse(error)
                return error
            }
        }
        let plugin = LoadedPlugin(path: candidate.path, id: candidate.id, version: candidate.version, summary: candidate.summary,
                                  license: candidate.license, abiMinor: candidate.abiMinor, features: allowed,
                                  refusedFeatures: candidate.refusedFeatures, entry: candidate.entry)
        state.withLock { s in
            s.plugins.append(plugin)
            s.features.append(contentsOf: allowed)
            s.contexts[plugin.id] = context
            for feature in allowed where feature.kind == .channel {
                for namespace in feature.declarations where s.channelOwners[namespace] == nil { s.channelOwners[namespace] = feature }
            }
        }
        log.info("plugin \(plugin.id) \(plugin.version) loaded", [
            "path": .string(plugin.path), "plugin": .string(plugin.id), "abi": .string("\(PluginABI.major).\(plugin.abiMinor)"),
            "features": .string(allowed.map { "\($0.kind):\($0.id)" }.joined(separator: ",")),
        ])
        if state.withLock({ $0.loaded }) { resolveDuplicates() }
        return nil
    }

    /// Declarations the config does not allow, as one error naming the key to add.
    private func policyProblem(_ feature: PluginFeature, path: String) -> PluginLoadError? {
        switch feature.kind {
        case .discovery:
            let refused = feature.declarations.filter {
                !configuration.allowedServiceTypes.contains(PluginHostConfiguration.baseServiceType($0))
                    && !configuration.allowedServiceTypes.contains($0)
            }
            guard !refused.isEmpty else { return nil }
            return PluginLoadError(.notAllowed, path: path, pluginID: feature.pluginID,
                "feature \(feature.id) (discovery) refused: it browses \(refused.joined(separator: ", ")), which the config does not allow; add \(refused.map { "\"\(PluginHostConfiguration.baseServiceType($0))\"" }.joined(separator: ", ")) to \(PluginHostConfiguration.allowedServicesKey)")
        case .channel:
            let refused = feature.declarations.filter { !configuration.allowedNamespaces.contains($0) }
            guard !refused.isEmpty else { return nil }
            return PluginLoadError(.notAllowed, path: path, pluginID: feature.pluginID,
                "feature \(feature.id) (channel) refused: it uses \(refused.joined(separator: ", ")), which the config does not allow; add \(refused.map { "\"\($0)\"" }.joined(separator: ", ")) to \(PluginHostConfiguration.allowedNamespacesKey)")
        case .mediaFormat, .logSink, .bridge:
            return nil
        }
    }

    /// Same kind and id: the highest rank wins; on a tie the one found first.
    private func resolveDuplicates() {
        let lost = state.withLock { s -> [(PluginFeature, PluginFeature)] in
            var winners: [PluginFeature] = []
            var lost: [(PluginFeature, PluginFeature)] = []
            for f in s.features + s.shadowed {
                if let i = winners.firstIndex(where: { $0.kind == f.kind && $0.id == f.id }) {
                    if f.rank > winners[i].rank {
                        lost.append((winners[i], f))
                        winners[i] = f
                    } else {
                        lost.append((f, winners[i]))
                    }
                } else {
                    winners.append(f)
                }
            }
            s.features = winners
            s.shadowed = lost.map(\.0)
            return lost
        }
        for (loser, winner) in lost {
            log.info("feature \(loser.kind):\(loser.id) of plugin \(loser.pluginID) (rank \(loser.rank)) is shadowed by plugin \(winner.pluginID) (rank \(winner.rank))",
                     ["plugin": .string(loser.pluginID), "feature": .string(loser.id)])
        }
    }

    /// A feature whose declarations the config does not allow (the message names the key that
    /// allows them). A plugin that ships with castline (the example channels beside the binary)
    /// is left out as the config chose, which is no fault: an info record. Any other plugin's
    /// refusal is a warning. Either joins ``problems`` (`plugins list`, `doctor`).
    private func refuseByPolicy(_ error: PluginLoadError) {
        let fields: LogFields = ["path": .string(error.path), "plugin": .string(error.pluginID ?? ""), "problem": .string(error.kind.rawValue)]
        if PluginSearchPath.isFirstParty(error.path) {
            log.info("\(error.description) (a plugin shipped with castline, not used unless allowed)", fields)
        } else {
            log.warning(error.description, fields)
        }
        state.withLock { $0.problems.append(error) }
    }

    private func refuse(_ error: PluginLoadError) {
        log.error(error.description, [
            "path": .string(error.path), "plugin": .string(error.pluginID ?? ""), "problem": .string(error.kind.rawValue),
        ])
        state.withLock { $0.problems.append(error) }
    }

    /// The config object of a plugin as JSON text.
    func config(for pluginID: String) -> String { configuration.pluginConfigs[pluginID] ?? "{}" }

    /// Calls every plugin's `deinit` (after the caller closed the feature instances). Plugins stay mapped.
    public func shutdown() {
        let (plugins, contexts, isolated) = state.withLock { s -> ([LoadedPlugin], [PluginHostContext], [IsolatedPlugin]) in
            defer {
                s.plugins = []
                s.features = []
                s.contexts = [:]
                s.isolated = [:]
            }
            return (s.plugins, Array(s.contexts.values), Array(s.isolated.values))
        }
        for helper in isolated { helper.stop() }
        // A plugin that overran a bound may still be inside that call: its deinit is not called.
        let overran = Set(state.withLock { $0.disabledFeatures.values.compactMap(\.pluginID) })
        for plugin in plugins where !overran.contains(plugin.id) {
            guard let deinitialize = plugin.entry.deinitialize else { continue }
            let entry = EntryCall(initialize: nil, deinitialize: deinitialize)
            if !bounded({ entry.deinitialize!() }) {
                log.error("plugin \(plugin.id)'s deinit did not return within \(PluginScan.seconds(configuration.callTimeout)) (plugins.call_timeout); castline goes on without waiting",
                          ["plugin": .string(plugin.id), "path": .string(plugin.path), "call": "deinit", "problem": "timed_out"])
            }
        }
        for context in contexts { context.unregister() }
    }

    /// Runs a plugin-level call (`init`, `deinit`) on a thread of its own and waits at most the
    /// call bound for it; false when it did not return in time (the thread is left to it).
    private func bounded(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "castline.plugin.entry").async {
            body()
            done.signal()
        }
        return done.wait(timeout: .now() + .nanoseconds(Int(configuration.callTimeout * 1e9))) == .success
    }
}

/// A plugin's entry points carried to the thread that calls them (function pointers into a
/// never-unloaded image).
struct EntryCall: @unchecked Sendable {
    let initialize: (@convention(c) (UnsafePointer<castline_host_services>?, OpaquePointer?, UnsafePointer<CChar>?,
                                     castline_error_buffer) -> Int32)?
    let deinitialize: (@convention(c) () -> Void)?
}
