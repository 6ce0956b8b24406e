import CastCore
import CastlineLocalMedia
import CastLogging
import CastSender
import CastlineConfig
import CastlineLogs

/// Jobs at run time (the API's `/v1/jobs`), config reloads (SIGHUP) and log rules.
extension Daemon {
    // MARK: Jobs

    /// Every job with where it comes from, its definition and its state on each device.
    package func jobsJSON() async -> JSONValue {
        var list: [JSONValue] = []
        for job in allJobs { list.append(await jobJSON(job)) }
        return ["jobs": .array(list)]
    }

    /// One job, or nil when there is none by that name.
    package func jobJSON(named name: String) async -> JSONValue? {
        guard let job = allJobs.first(where: { $0.name == name }) else { return nil }
        return await jobJSON(job)
    }

    func jobJSON(_ job: JobEntry) async -> JSONValue {
        var devices: [JSONValue] = []
        for entry in await drivers[job.name]?.summary ?? [] {
            devices.append(["device": .string(entry.device), "id": .string(entry.id), "state": .string(entry.state.description),
                            "casts": .int(Int64(entry.casts))])
        }
        let source = apiJobs[job.name] != nil ? "api" : "\(config.file):\(job.mark.line)"
        var object: JSONObject = ["name": .string(job.name), "source": .string(source), "definition": job.json, "devices": .array(devices)]
        if let wall = wallJobs[job.name] { object.set("sync", await wall.json(plane: plane)) }
        if job.announcement != nil, let driver = drivers[job.name] {
            object.set("devices", .array(await driver.matchedDevices.map { ["device": .string($0.device), "id": .string($0.id), "state": "ready"] }))
            object.set("announcement", await driver.announcementState)
        }
        if job.schedule != nil, let (entry, next) = await drivers[job.name]?.scheduleState {
            var state = JSONObject()
            state.set("entry", entry.map { .int(Int64($0 + 1)) } ?? .null)
            state.set("in_force", .string(entry.map { "entry \($0 + 1)" } ?? (job.fallback != nil ? "fallback" : "nothing")))
            state.set("next_switch", next.map { .string(LogTime.rfc3339($0 * 1_000_000_000, fractionDigits: 0)) } ?? .null)
            object.set("schedule", .object(state))
        }
        return .object(object)
    }

    /// Adds or replaces an API job and keeps it in the jobs file. A job of the config file is
    /// refused (edit the file and reload instead).
    package func putJob(_ job: JobEntry) async throws(ControlError) -> (JSONValue, created: Bool) {
        if let owned = config.jobs.first(where: { $0.name == job.name }) {
            throw ControlError(.conflict, "job_in_config", "job \"\(job.name)\" is defined in \(config.file):\(owned.mark.line); edit that file and reload (SIGHUP)")
        }
        // An API job serves local files only where media.roots allows, as every command does.
        for path in job.localPaths { _ = try ControlError.localMedia { () throws(LocalMediaError) in try media.policy.resolve(path, what: "job \(job.name):") } }
        let created = apiJobs[job.name] == nil
        if created, apiJobs.count >= JobStore.maximumJobs {
            throw ControlError(.conflict, "too_many_jobs", "castline run keeps at most \(JobStore.maximumJobs) API jobs; delete one first")
        }
        if let old = apiJobs[job.name], Self.same(old, job) { return (await jobJSON(job), false) }
        var next = apiJobs
        next[job.name] = job
        try jobStore?.save(next.values.sorted { $0.name < $1.name })
        apiJobs = next
        if let old = drivers.removeValue(forKey: job.name) { await old.stop(stopCasting: false) }
        if let old = wallJobs.removeValue(forKey: job.name) { await old.stop(plane: plane, stopCasting: false) }
        startDriver(job)
        await feedKnownDevices(to: [job.name])
        log.info("job \(job.name) \(created ? "added" : "changed") through the API", ["job": .string(job.name)])
        events.emit(.job, created ? "added" : "changed", job: job.name, [:])
        return (await jobJSON(job), created)
    }

    /// Removes an API job; its cast stops unless `daemon.on_job_removed: leave`.
    package func deleteJob(_ name: String) async throws(ControlError) {
        if let owned = config.jobs.first(where: { $0.name == name }) {
            throw ControlError(.conflict, "job_in_config", "job \"\(name)\" is defined in \(config.file):\(owned.mark.line); remove it there and reload (SIGHUP)")
        }
        guard apiJobs[name] != nil else { throw ControlError(.notFound, "unknown_job", "no job \"\(name)\"") }
        var next = apiJobs
        next[name] = nil
        try jobStore?.save(next.values.sorted { $0.name < $1.name })
        apiJobs = next
        await drivers.removeValue(forKey: name)?.stop(stopCasting: config.daemon.onJobRemoved == .stop)
        await wallJobs.removeValue(forKey: name)?.stop(plane: plane, stopCasting: config.daemon.onJobRemoved == .stop)
        log.info("job \(name) removed through the API (\(config.daemon.onJobRemoved == .stop ? "its cast stopped" : "its cast left playing"))",
                 ["job": .string(name)])
        events.emit(.job, "removed", job: name, [:])
    }

    /// Hands the devices discovery knows to the named jobs' drivers (a job that just started).
    func feedKnownDevices(to names: [String]) async {
        for device in await context.discoveryManager.devices {
            let aliases = await registry.entry(device.id)?.aliases ?? []
            for name in names { await drivers[name]?.deviceFound(device, aliases: aliases) }
        }
    }

    // MARK: Reload

    /// Applies a new config: log rules at once (the layers above the config's stay), static
    /// devices and aliases, and jobs: changed ones restart, removed ones stop their cast unless
    /// `daemon.on_job_removed: leave`, unchanged ones keep playing. What needs a restart is
    /// logged with its key.
    package func reload(_ new: CastlineConfiguration) async {
        notifier.reloading()
        // A plugin disabled for overrunning a bound gets another chance.
        _ = pluginChannels.plugins?.reenableDisabled()
        logLayers.config = new.logging.rules
        logLayers.configSource = new.file
        logLayers.apply(to: logSystem)
        for key in Self.restartKeys(old: config, new: new) {
            log.warning("config reload: \(key) changed; it takes effect after a restart", ["key": .string(key)])
        }
        let old = config
        config = new
        field.update(new.daemon)
        await registry.setAliases(Self.aliases(new))
        if old.devices != new.devices || old.discovery.allows(["static"]) != new.discovery.allows(["static"]) {
            await context.discoveryManager.remove(providerNamed: "static")
            if let provider = staticProvider(new) { await context.discoveryManager.add(provider) }
            log.info("config reload: \(new.devices.count) configured device(s)", ["devices": .int(new.devices.count)])
        }
        var changed: [String] = []
        let wanted = Dictionary(allJobs.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for (name, wall) in wallJobs where wanted[name].map({ !Self.same($0, wall.job) }) ?? true {
            wallJobs[name] = nil
            await wall.stop(plane: plane, stopCasting: wanted[name] == nil && new.daemon.onJobRemoved == .stop)
        }
        for (name, driver) in drivers where wanted[name] == nil {
            drivers[name] = nil
            await driver.stop(stopCasting: new.daemon.onJobRemoved == .stop)
            log.info("config reload: job \(name) removed", ["job": .string(name)])
        }
        for job in allJobs {
            if let driver = drivers[job.name], Self.same(driver.job, job) { continue }
            if wallJobs[job.name] != nil { continue }
            if let driver = drivers.removeValue(forKey: job.name) { await driver.stop(stopCasting: false, releaseClaims: false) }
            startDriver(job)
            changed.append(job.name)
        }
        await feedKnownDevices(to: changed)
        let status = await statusLine()
        log.info("config reloaded from \(new.file): \(changed.count) job(s) started or restarted; \(status)", ["config": .string(new.file)])
        notifier.reloaded(status: status)
    }

    /// The keys whose change a reload cannot apply.
    static func restartKeys(old: CastlineConfiguration, new: CastlineConfiguration) -> [String] {
        var keys: [String] = []
        if old.discovery.providers != new.discovery.providers { keys.append("discovery.providers") }
        if old.discovery.interfaces != new.discovery.interfaces { keys.append("discovery.interfaces") }
        if old.discovery.allowedServices != new.discovery.allowedServices { keys.append("discovery.allowed_services") }
        if old.plugins.paths != new.plugins.paths || old.plugins.disabled != new.plugins.disabled || old.plugins.configs != new.plugins.configs
            || old.plugins.isolated != new.plugins.isolated || old.plugins.inProcess != new.plugins.inProcess || old.plugins.limits != new.plugins.limits {
            keys.append("plugins")
        }
        if old.media.roots != new.media.roots || old.media.ports != new.media.ports { keys.append("media.roots, media.port") }
        if old.logging.sinks.map(\.type) != new.logging.sinks.map(\.type) { keys.append("logging.sinks") }
        if old.api.socket != new.api.socket || old.api.listen != new.api.listen || old.api.tokenFile != new.api.tokenFile {
            keys.append("api")
        }
        if old.channels.allowedNamespaces != new.channels.allowedNamespaces { keys.append("channels.allowed_namespaces") }
        if old.session.resumeFile != new.session.resumeFile || old.session.deviceAuth != new.session.deviceAuth
            || old.receiverAppID != new.receiverAppID || old.senderID != new.senderID {
            keys.append("session")
        }
        return keys
    }

    static func same(_ a: JobEntry, _ b: JobEntry) -> Bool {
        var a = a, b = b
        a.mark = SourceMark(line: 0, column: 0)
        b.mark = a.mark
        return a == b
    }

    // MARK: Log rules

    /// Replaces the API's layer of log rules (nil: removes it); the result is the same as the
    /// layers replayed by `logs explain`.
    package func setAPILogRules(_ rules: String?) throws(ControlError) {
        if let rules {
            do { _ = try LogRuleParser.parse(rules) } catch {
                throw ControlError.usage("bad_log_rules", "log rules: column \(error.column): \(error.reason)")
            }
        }
        logLayers.api = rules
        logLayers.apply(to: logSystem)
        events.emit(.logging, "rules", ["rules": .string(logSystem.filter.ruleString)])
    }
}
