import CastCore
import CastLogging

extension CastlineConfiguration {
    package static let topLevelKeys = [
        "receiver_app_id", "sender_id", "devices", "discovery", "logging", "plugins", "channels", "session", "daemon", "api", "nearby",
        "mqtt", "jobs", "media",
    ]

    /// Decodes a config file's text. Throws `ConfigErrors` with every error found (each with
    /// file:line:column); warnings alone do not throw and are returned in `warnings`.
    public static func parse(_ text: String, file: String) throws(ConfigErrors) -> (CastlineConfiguration, warnings: [ConfigDiagnostic]) {
        let root: YAMLNode
        do { root = try YAMLParser.parse(text) } catch {
            throw ConfigErrors([ConfigDiagnostic(file: file, mark: error.mark, message: "YAML syntax: \(error.message)")])
        }
        let reader = ConfigReader(file: file)
        var config = CastlineConfiguration()
        config.file = file
        config.decode(root, reader: reader)
        if reader.hasErrors { throw ConfigErrors(reader.diagnostics, partial: config) }
        return (config, reader.diagnostics)
    }

    mutating func decode(_ root: YAMLNode, reader: ConfigReader) {
        guard let top = reader.mapping(root, path: "", allowed: Self.topLevelKeys) else { return }
        if let app = top.string("receiver_app_id") {
            if Self.isAppID(app) { receiverAppID = app } else {
                reader.error(top.value("receiver_app_id")!.mark, "receiver_app_id must be an app id such as CC1AD845 (letters and digits), not \"\(app)\"")
            }
        }
        senderID = top.string("sender_id")
        if let items = top.list("devices") {
            devices = items.enumerated().compactMap { Self.device($1, path: "devices[\($0)]", reader: reader) }
            var seen: [String: SourceMark] = [:]
            for device in devices {
                for name in [device.name] + device.aliases {
                    if let first = seen[name] {
                        reader.error(device.mark, "device name \"\(name)\" is used twice (first at \(first)): names and aliases must be unique")
                    }
                    seen[name] = device.mark
                }
            }
        }
        if let node = top.value("discovery") { decodeDiscovery(node, reader: reader) }
        if let node = top.value("logging") { decodeLogging(node, reader: reader) }
        if let node = top.value("plugins") { decodePlugins(node, reader: reader) }
        if let node = top.value("channels"), let map = reader.mapping(node, path: "channels", allowed: ["allowed_namespaces"]) {
            channels.allowedNamespaces = map.strings("allowed_namespaces") ?? []
            for (index, namespace) in channels.allowedNamespaces.enumerated() where !namespace.hasPrefix("urn:x-cast:") {
                reader.error(map.value("allowed_namespaces")!.mark,
                             "channels.allowed_namespaces[\(index)] must start with urn:x-cast: (\"\(namespace)\")")
            }
        }
        if let node = top.value("session") { decodeSession(node, reader: reader) }
        if let node = top.value("media") { decodeMedia(node, reader: reader) }
        if let node = top.value("daemon"), let map = reader.mapping(node, path: "daemon", allowed: ["on_stop", "on_job_removed", "jobs_file", "idle_timeouts", "field_profiles", "field_time_scale",
                                                                                  "castline_receiver_app_id"]) {
            if let value = map.choice("on_stop", DaemonSettings.OnStop.allCases.map(\.rawValue)) { daemon.onStop = .init(rawValue: value)! }
            if let value = map.choice("on_job_removed", DaemonSettings.OnStop.allCases.map(\.rawValue)) { daemon.onJobRemoved = .init(rawValue: value)! }
            daemon.jobsFile = map.string("jobs_file")
            if let timeouts = map.value("idle_timeouts"), let models = reader.mapping(timeouts, path: "daemon.idle_timeouts", allowed: nil) {
                for entry in models.entries {
                    do { _ = try GlobPattern(entry.key) } catch {
                        reader.error(entry.mark, "daemon.idle_timeouts: \"\(entry.key)\" is not a valid glob: \(error)")
                        continue
                    }
                    if let seconds = reader.double(entry.value, path: "daemon.idle_timeouts.\(entry.key)", range: 10...86_400, unit: "seconds") {
                        daemon.idleTimeouts.append((entry.key, seconds))
                    }
                }
            }
            if let node = map.value("field_profiles") { daemon.fieldProfiles = Self.fieldProfiles(node, reader: reader) }
            if let scale = map.double("field_time_scale", 1...10_000) { daemon.fieldTimeScale = scale }
            if let id = map.string("castline_receiver_app_id") {
                if id.count == 8, id.allSatisfy(\.isHexDigit) { daemon.castlineReceiverAppID = id.uppercased() } else {
                    reader.error(map.value("castline_receiver_app_id")!.mark, "daemon.castline_receiver_app_id must be an app id: 8 hex digits, not \"\(id)\"")
                }
            }
        }
        if let node = top.value("api") { decodeAPI(node, reader: reader) }
        if let node = top.value("nearby") { decodeNearby(node, reader: reader) }
        if let node = top.value("mqtt") { decodeMQTT(node, reader: reader) }
        if let items = top.list("jobs") {
            jobs = items.enumerated().compactMap { Self.job($1, path: "jobs[\($0)]", reader: reader) }
            for item in items {
                guard case .mapping(let pairs) = item.content,
                      let name = pairs.first(where: { $0.key.scalarText == "name" })?.value.scalarText, jobMarks[name] == nil else { continue }
                jobMarks[name] = JobSourceMarks.of(item)
            }
            var seen: [String: SourceMark] = [:]
            for job in jobs {
                let pages = [job.site] + job.scheduled.map(\.site) + [job.fallback?.site]
                for case let site? in pages where site.receiver == .castline && daemon.castlineReceiverAppID == nil {
                    reader.error(site.receiverMark ?? job.mark, "\(job.name): site.receiver: castline needs daemon.castline_receiver_app_id, the app id "
                                 + "you registered castline's receiver page under (docs/receiver.md)")
                }
                if let first = seen[job.name] { reader.error(job.mark, "job name \"\(job.name)\" is used twice (first at \(first))") }
                seen[job.name] = job.mark
            }
        }
    }

    mutating func decodeAPI(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "api", allowed: ["socket", "listen", "token_file", "tls_certificate", "tls_key",
                                                                    "read_timeout"]) else { return }
        if let v = map.double("read_timeout", 0.1...3600, unit: "seconds") { api.readTimeout = v }
        api.mark = node.mark
        api.socket = map.string("socket")
        if let socket = api.socket, !socket.hasPrefix("/") {
            reader.error(map.value("socket")!.mark, "api.socket must be an absolute path, not \"\(socket)\"")
        }
        api.listen = map.string("listen")
        if let listen = api.listen {
            let colon = listen.lastIndex(of: ":")
            let port = colon.flatMap { Int(listen[listen.index(after: $0)...]) }
            if colon == nil || port == nil || !(1...65_535).contains(port!) || listen[..<colon!].isEmpty {
                reader.error(map.value("listen")!.mark, "api.listen must be host:port (e.g. 127.0.0.1:8765), not \"\(listen)\"")
            }
            if map.value("token_file") == nil, let mark = map.keyMark("listen") {
                reader.error(mark, "api.listen needs api.token_file: every TCP request must carry its bearer token")
            }
        }
        api.tokenFile = map.string("token_file")
        api.tlsCertificate = map.string("tls_certificate")
        api.tlsKey = map.string("tls_key")
        if (api.tlsCertificate == nil) != (api.tlsKey == nil), let mark = map.keyMark("tls_certificate") ?? map.keyMark("tls_key") {
            reader.error(mark, "api.tls_certificate and api.tls_key go together")
        }
    }

    mutating func decodeNearby(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "nearby", allowed: ["state_dir", "interfaces", "announce_jobs", "namespace"]) else { return }
        nearby.mark = node.mark
        if let dir = map.string("state_dir") {
            if dir.hasPrefix("/") { nearby.stateDir = dir } else {
                reader.error(map.value("state_dir")!.mark, "nearby.state_dir must be an absolute path, not \"\(dir)\"")
            }
        }
        nearby.interfaces = map.strings("interfaces") ?? []
        if let value = map.bool("announce_jobs") { nearby.announceJobs = value }
        if let namespace = map.string("namespace") {
            // The rule of NearbyMessage.validate(namespace:) (CastNearby), which this module does not import.
            let allowed = namespace.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
            }
            if allowed, (1...32).contains(namespace.utf8.count) { nearby.namespace = namespace } else {
                reader.error(map.value("namespace")!.mark,
                             "nearby.namespace must be 1-32 letters, digits, '.', '_' or '-', not \"\(namespace)\"")
            }
        }
    }

    static func isAppID(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    static func device(_ node: YAMLNode, path: String, reader: ConfigReader) -> DeviceEntry? {
        guard let map = reader.mapping(node, path: path, allowed: ["name", "host", "port", "id", "aliases", "model"]) else { return nil }
        let name = map.require("name").flatMap { reader.string($0, path: map.child("name")) }
        let host = map.require("host").flatMap { reader.string($0, path: map.child("host")) }
        guard let name, let host else { return nil }
        if name.isEmpty { reader.error(map.value("name")!.mark, "\(path).name must not be empty") }
        if host.isEmpty || host.contains(where: { $0 == " " || $0 == "/" }) {
            reader.error(map.value("host")!.mark, "\(path).host must be an address or host name, not \"\(host)\"")
        }
        var device = DeviceEntry(name: name, host: host, port: map.int("port", 1...65535) ?? 8009,
                                 id: map.string("id"), aliases: map.strings("aliases") ?? [])
        if let model = map.string("model") {
            if model.allSatisfy({ $0 == " " || $0 == "\t" }) {
                reader.error(map.value("model")!.mark, "\(path).model must name a model such as \"Google Nest Hub\" (as eureka_info or `castline discover` shows it), not an empty string")
            } else {
                device.model = model
            }
        }
        device.mark = node.mark
        return device
    }

    mutating func decodeDiscovery(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "discovery",
                                       allowed: ["autostart", "providers", "allowed_services", "interfaces", "timeout"]) else { return }
        if let value = map.bool("autostart") { discovery.autostart = value }
        discovery.providers = map.strings("providers")
        if let services = map.strings("allowed_services") {
            discovery.allowedServices = services
            for (index, service) in services.enumerated() where !Self.isServiceType(service) {
                reader.error(map.value("allowed_services")!.mark,
                             "discovery.allowed_services[\(index)] must be a DNS-SD service type such as _googlecast._tcp, not \"\(service)\"")
            }
        }
        discovery.interfaces = map.strings("interfaces") ?? []
        if let value = map.double("timeout", 0.1...3600, unit: "seconds") { discovery.timeout = value }
    }

    /// `_name._tcp` / `_name._udp`, optionally with a `_sub.` subtype in front.
    static func isServiceType(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.last == "_tcp" || parts.last == "_udp" else { return false }
        return parts.dropLast().allSatisfy { $0.count >= 2 && $0.first == "_" }
    }

    mutating func decodeLogging(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "logging", allowed: ["rules", "console", "console_format", "sinks", "cli_sinks"]) else { return }
        if let rulesNode = map.value("rules"), let rules = reader.string(rulesNode, path: "logging.rules") {
            do {
                _ = try LogRuleParser.parse(rules)
                logging.rules = rules
            } catch {
                reader.error(Self.mark(in: rulesNode, offset: error.offset), "logging.rules: \(error.reason)")
            }
        }
        if let value = map.bool("console") { logging.console = value }
        if let value = map.choice("console_format", ["short", "detailed"]) { logging.consoleFormat = value }
        if let value = map.bool("cli_sinks") { logging.cliSinks = value }
        if let items = map.list("sinks") {
            for (index, item) in items.enumerated() {
                let path = "logging.sinks[\(index)]"
                guard let sink = reader.mapping(item, path: path, allowed: ["type", "options"]),
                      let type = sink.require("type").flatMap({ reader.string($0, path: sink.child("type")) }) else { continue }
                var entry = SinkEntry(type: type)
                entry.mark = item.mark
                if let options = sink.value("options") {
                    guard case .mapping = options.content else {
                        reader.error(options.mark, "\(path).options must be a mapping, not \(options.kindDescription)")
                        continue
                    }
                    entry.options = options.jsonValue.serialized()
                }
                logging.sinks.append(entry)
            }
        }
    }

    /// The position of a character inside a scalar: exact for single-line plain and quoted
    /// scalars, the scalar's start otherwise.
    static func mark(in node: YAMLNode, offset: Int) -> SourceMark {
        guard case .scalar(let text, let plain) = node.content, !text.contains("\n") else { return node.mark }
        return SourceMark(line: node.mark.line, column: node.mark.column + offset + (plain ? 0 : 1))
    }

    mutating func decodePlugins(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "plugins", allowed: ["paths", "disabled", "config", "call_timeout", "isolated", "in_process", "limits"]) else { return }
        plugins.paths = map.strings("paths") ?? []
        plugins.disabled = map.strings("disabled") ?? []
        plugins.isolated = map.strings("isolated") ?? []
        plugins.inProcess = map.strings("in_process") ?? []
        for id in Set(plugins.isolated).intersection(plugins.inProcess).sorted() {
            reader.error(map.value("in_process")!.mark, "plugin \(id) is in both plugins.isolated and plugins.in_process; keep one")
        }
        if let limitsNode = map.value("limits"), let limits = reader.mapping(limitsNode, path: "plugins.limits", allowed: ["memory_mb", "cpu_seconds", "open_files"]) {
            if let v = limits.int("memory_mb", 16...1_048_576) { plugins.limits.memoryMB = v }
            if let v = limits.double("cpu_seconds", 0.1...60, unit: "seconds a minute") { plugins.limits.cpuSeconds = v }
            if let v = limits.int("open_files", 16...1_048_576) { plugins.limits.openFiles = v }
        }
        if let v = map.double("call_timeout", 0.1...600, unit: "seconds") { plugins.callTimeout = v }
        if let configNode = map.value("config"), let configs = reader.mapping(configNode, path: "plugins.config", allowed: nil) {
            for entry in configs.entries {
                guard case .mapping = entry.value.content else {
                    if !entry.value.isNull {
                        reader.error(entry.value.mark, "plugins.config.\(entry.key) must be a mapping (the plugin's JSON object), not \(entry.value.kindDescription)")
                    }
                    continue
                }
                plugins.configs[entry.key] = entry.value.jsonValue.serialized()
                plugins.marks[entry.key] = entry.mark
            }
        }
    }

    mutating func decodeSession(_ node: YAMLNode, reader: ConfigReader) {
        guard let map = reader.mapping(node, path: "session", allowed: [
            "resume_file", "heartbeat_interval", "heartbeat_timeout", "connect_timeout", "request_timeout",
            "reconnect", "device_auth", "trust_anchors",
        ]) else { return }
        session.resumeFile = map.string("resume_file")
        if let v = map.double("heartbeat_interval", 0.1...300, unit: "seconds") { session.heartbeatInterval = v }
        if let v = map.double("heartbeat_timeout", 0.2...600, unit: "seconds") { session.heartbeatTimeout = v }
        if session.heartbeatTimeout <= session.heartbeatInterval, let mark = map.keyMark("heartbeat_timeout") ?? map.keyMark("heartbeat_interval") {
            reader.error(mark, "session.heartbeat_timeout (\(session.heartbeatTimeout.compact) s) must be longer than session.heartbeat_interval (\(session.heartbeatInterval.compact) s)")
        }
        if let v = map.double("connect_timeout", 0.1...300, unit: "seconds") { session.connectTimeout = v }
        if let v = map.double("request_timeout", 0.1...600, unit: "seconds") { session.requestTimeout = v }
        if let reconnectNode = map.value("reconnect"),
           let reconnect = reader.mapping(reconnectNode, path: "session.reconnect", allowed: ["max_attempts", "initial_delay", "max_delay"]) {
            if let attempts = reconnect.value("max_attempts") {
                if case .scalar("unlimited", _) = attempts.content {
                    session.reconnectMaxAttempts = nil
                } else if let n = reader.int(attempts, path: "session.reconnect.max_attempts", range: 0...1_000_000) {
                    session.reconnectMaxAttempts = n
                }
            }
            if let v = reconnect.double("initial_delay", 0...600, unit: "seconds") { session.reconnectInitialDelay = v }
            if let v = reconnect.double("max_delay", 0...3600, unit: "seconds") { session.reconnectMaxDelay = v }
        }
        if let v = map.choice("device_auth", SessionSettings.DeviceAuth.allCases.map(\.rawValue)) { session.deviceAuth = .init(rawValue: v)! }
        session.trustAnchors = map.strings("trust_anchors") ?? []
    }

    /// `daemon.field_profiles`: model globs → a profile's name, or a mapping of overrides.
    static func fieldProfiles(_ node: YAMLNode, reader: ConfigReader) -> [FieldProfileOverride] {
        guard let models = reader.mapping(node, path: "daemon.field_profiles", allowed: nil) else { return [] }
        let names = FieldProfile.builtIn.map(\.name)
        var result: [FieldProfileOverride] = []
        for entry in models.entries {
            let path = "daemon.field_profiles.\(entry.key)"
            do { _ = try GlobPattern(entry.key) } catch {
                reader.error(entry.mark, "daemon.field_profiles: \"\(entry.key)\" is not a valid glob: \(error)")
                continue
            }
            var override = FieldProfileOverride(model: entry.key)
            if entry.value.scalarText != nil {
                guard let name = reader.choice(entry.value, path: path, among: names) else { continue }
                override.profile = name
            } else {
                guard let map = reader.mapping(entry.value, path: path, allowed: ["profile", "idle_timeout", "idle_reset_by"]) else { continue }
                override.profile = map.choice("profile", names)
                if let node = map.value("idle_timeout") {
                    if node.scalarText == "never" { override.idleTimeout = .some(nil) } else if let seconds = reader.double(node, path: "\(path).idle_timeout", range: 1...86_400, unit: "seconds") {
                        override.idleTimeout = .some(seconds)
                    }
                }
                if let reset = map.choice("idle_reset_by", FieldProfile.IdleReset.allCases.map(\.rawValue)) { override.idleResetBy = .init(rawValue: reset) }
            }
            result.append(override)
        }
        return result
    }

    static func job(_ node: YAMLNode, path: String, reader: ConfigReader) -> JobEntry? {
        guard let map = reader.mapping(node, path: path, allowed: [
            "name", "devices", "app_id", "media", "site", "schedule", "timezone", "fallback", "recast_on", "takeover", "reclaim_after",
            "check_interval", "retry_delay", "announce", "screen_off", "sync",
        ]) else { return nil }
        if let node = map.value("announce") { return announceJob(node, in: map, path: path, reader: reader) }
        let (name, devices) = jobTarget(map, node: node, path: path, reader: reader)
        var media: MediaEntry?
        var site: SiteEntry?
        var schedule: (Schedule, [JobEntry.Content])?
        let hasSchedule = map.value("schedule") != nil
        if let node = map.value("schedule") {
            schedule = Self.schedule(node, zone: map.value("timezone"), path: map.child("schedule"), reader: reader)
            if let first = schedule?.1.first { (media, site) = (first.media, first.site) }
            if media == nil, let page = site { media = MediaEntry(page: page) }
            if map.value("media") != nil || map.value("site") != nil {
                reader.error(map.keyMark(map.value("media") != nil ? "media" : "site") ?? node.mark,
                             "\(path) has a schedule: its entries say what shows (and fallback: what shows outside them), not media or site")
            }
        } else if map.value("timezone") != nil || map.value("fallback") != nil {
            reader.error(map.keyMark(map.value("timezone") != nil ? "timezone" : "fallback") ?? node.mark,
                         "\(path): timezone and fallback go with a schedule")
        }
        switch hasSchedule ? (nil, nil) : (map.value("media"), map.value("site")) {
        case (nil, nil) where hasSchedule:
            break
        case (let mediaNode?, nil):
            media = Self.media(mediaNode, path: map.child("media"), reader: reader)
        case (nil, let siteNode?):
            site = Self.site(siteNode, path: map.child("site"), reader: reader)
            if let site { media = MediaEntry(page: site) }
        case (_?, _?):
            reader.error(map.keyMark("site") ?? node.mark, "\(path) has both media and site: a job casts one or the other")
        case (nil, nil):
            reader.error(node.mark, "\(path) needs media (what to play), site (a web page to keep shown) or announce (an announcement to play and then restore)")
        }
        // Every field is checked even when a required one is missing, so all errors show at once.
        var job = JobEntry(name: name ?? "", devices: devices ?? [], media: media ?? MediaEntry(url: ""))
        job.site = site
        if let (plan, contents) = schedule {
            job.schedule = plan
            job.scheduled = contents
            if let node = map.value("fallback") { job.fallback = Self.content(node, path: map.child("fallback"), reader: reader) }
        }
        job.mark = node.mark
        if site != nil, let mark = map.keyMark("app_id") {
            reader.error(mark, "\(path).app_id does not apply to a site job (it runs DashCast, 84912283)")
        }
        if let app = map.string("app_id") {
            if isAppID(app) { job.appID = app } else { reader.error(map.value("app_id")!.mark, "\(path).app_id must be an app id such as CC1AD845, not \"\(app)\"") }
        }
        if let triggersNode = map.value("recast_on"), let triggers = reader.strings(triggersNode, path: map.child("recast_on")) {
            var set = Set<JobEntry.Trigger>()
            for trigger in triggers {
                if let value = JobEntry.Trigger(rawValue: trigger) { set.insert(value) } else {
                    reader.error(triggersNode.mark, "\(path).recast_on: \"\(trigger)\" is not one of \(JobEntry.Trigger.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            }
            job.recastOn = set
        }
        if let v = map.choice("takeover", JobEntry.Takeover.allCases.map(\.rawValue)) { job.takeover = .init(rawValue: v)! }
        if let v = map.choice("screen_off", JobEntry.ScreenOffPolicy.allCases.map(\.rawValue)) { job.screenOff = .init(rawValue: v)! }
        job.reclaimAfter = map.double("reclaim_after", 1...86_400 * 7, unit: "seconds")
        if job.reclaimAfter != nil, job.takeover == .reclaim, let mark = map.keyMark("reclaim_after") {
            reader.warning(mark, "\(path).reclaim_after has no effect with takeover: reclaim (the job reclaims at once)")
        }
        if let v = map.double("check_interval", 1...86_400, unit: "seconds") { job.checkInterval = v }
        if let v = map.double("retry_delay", 0.1...3600, unit: "seconds") { job.retryDelay = v }
        if let sync = map.bool("sync"), sync, let mark = map.keyMark("sync") {
            job.sync = true
            // A wall plays media its TVs fetch themselves, in the default receiver, in step.
            if hasSchedule || site != nil {
                reader.error(mark, "\(path).sync is for media (a video wall), not a site or a schedule")
            } else if let media, !(media.items ?? [media.url]).allSatisfy({ $0.lowercased().hasPrefix("http://") || $0.lowercased().hasPrefix("https://") }) {
                reader.error(mark, "\(path).sync: a wall's TVs fetch the media themselves; give http(s) URLs, not files or folders")
            }
            if job.appID != nil { reader.error(mark, "\(path).sync plays in the default receiver; leave out app_id") }
        }
        guard name != nil, devices != nil, media != nil else { return nil }
        return job
    }

    /// A job's `name:` and `devices:` (globs, checked).
    static func jobTarget(_ map: ConfigMapping, node: YAMLNode, path: String, reader: ConfigReader) -> (String?, [String]?) {
        let name = map.require("name").flatMap { reader.string($0, path: map.child("name")) }
        let devices = map.require("devices").flatMap { reader.strings($0, path: map.child("devices")) }
        for (index, pattern) in (devices ?? []).enumerated() {
            do { _ = try GlobPattern(pattern) } catch {
                reader.error(map.value("devices")!.mark, "\(path).devices[\(index)] \"\(pattern)\": \(error)")
            }
        }
        if devices?.isEmpty == true { reader.error(map.value("devices")?.mark ?? node.mark, "\(path).devices must name at least one device or glob") }
        return (name, devices)
    }

    /// A job's `schedule:` (a list of `{days, from, to, media | site}`) in `timezone` (default UTC).
    static func schedule(_ node: YAMLNode, zone zoneNode: YAMLNode?, path: String, reader: ConfigReader) -> (Schedule, [JobEntry.Content])? {
        var zone = ZoneRules.utc
        if let zoneNode, let name = reader.string(zoneNode, path: "timezone") {
            do { zone = try ZoneRules.load(name) } catch { reader.error(zoneNode.mark, "timezone: \(error)") }
        }
        guard let items = reader.list(node, path: path) else { return nil }
        guard !items.isEmpty else {
            reader.error(node.mark, "\(path) is empty: give entries such as {days: mon-fri, from: \"08:00\", to: \"18:00\", media: …}")
            return nil
        }
        var entries: [Schedule.Entry] = []
        var contents: [JobEntry.Content] = []
        for (index, item) in items.enumerated() {
            let here = "\(path)[\(index)]"
            guard let map = reader.mapping(item, path: here, allowed: ["days", "from", "to", "media", "site"]) else { continue }
            let days = map.require("days").flatMap { Self.days($0, path: map.child("days"), reader: reader) }
            let from = map.require("from").flatMap { Self.timeOfDay($0, path: map.child("from"), reader: reader) }
            let to = map.require("to").flatMap { Self.timeOfDay($0, path: map.child("to"), reader: reader) }
            let content = Self.content(item, path: here, reader: reader, map: map)
            guard let days, let from, let to, let content else { continue }
            if from == to { reader.error(map.value("to")!.mark, "\(here): from and to are the same time; an entry needs a range"); continue }
            entries.append(Schedule.Entry(days: days, from: from, to: to == 0 && from > 0 ? 86_400 : to, mark: item.mark))
            contents.append(content)
        }
        guard entries.count == items.count else { return nil }
        let schedule = Schedule(entries: entries, zone: zone)
        for (a, b) in schedule.overlaps {
            reader.error(entries[b].mark, "\(path)[\(b)] overlaps \(path)[\(a)] (line \(entries[a].mark.line)): one entry at a time")
        }
        return (schedule, contents)
    }

    /// What an entry or the fallback shows: `media:` or `site:`, one of them.
    static func content(_ node: YAMLNode, path: String, reader: ConfigReader, map given: ConfigMapping? = nil) -> JobEntry.Content? {
        guard let map = given ?? reader.mapping(node, path: path, allowed: ["media", "site"]) else { return nil }
        switch (map.value("media"), map.value("site")) {
        case (let m?, nil): return Self.media(m, path: map.child("media"), reader: reader).map { JobEntry.Content(media: $0) }
        case (nil, let s?): return Self.site(s, path: map.child("site"), reader: reader).map { JobEntry.Content(site: $0) }
        case (_?, _?): reader.error(node.mark, "\(path) has both media and site: one or the other")
        case (nil, nil): reader.error(node.mark, "\(path) needs media or site")
        }
        return nil
    }

    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// `mon-fri`, `sat,sun`, `[mon, wed]`, `daily`: a set of weekdays (0 Sunday).
    static func days(_ node: YAMLNode, path: String, reader: ConfigReader) -> Set<Int>? {
        var words: [String] = []
        if case .sequence = node.content { words = reader.strings(node, path: path) ?? [] } else if let text = reader.string(node, path: path) {
            words = text.split(separator: ",").map { String($0.filter { $0 != " " }) }
        }
        var days = Set<Int>()
        for word in words.map({ $0.lowercased() }) {
            if word == "daily" || word == "*" { days.formUnion(0..<7); continue }
            let ends = word.split(separator: "-").map(String.init)
            guard let first = ends.first.flatMap({ dayNames.firstIndex(of: String($0.prefix(3))) }),
                  let last = ends.last.flatMap({ dayNames.firstIndex(of: String($0.prefix(3))) }), ends.count <= 2 else {
                reader.error(node.mark, "\(path): \"\(word)\" is not a day (mon, tue, …, sun, a range such as mon-fri, or daily)")
                return nil
            }
            var day = first
            while true {
                days.insert(day)
                if day == last { break }
                day = (day + 1) % 7
            }
        }
        guard !days.isEmpty else { reader.error(node.mark, "\(path) names no day"); return nil }
        return days
    }

    /// `08:00`, `8:30:15`, `24:00`: seconds after midnight.
    static func timeOfDay(_ node: YAMLNode, path: String, reader: ConfigReader) -> Int? {
        guard let text = reader.string(node, path: path) else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }), let h = parts[0], let m = parts[1] else {
            reader.error(node.mark, "\(path): \"\(text)\" is not a time of day (HH:MM or HH:MM:SS)")
            return nil
        }
        let s = parts.count == 3 ? parts[2]! : 0
        let seconds = h * 3600 + m * 60 + s
        guard (0...23).contains(h) || (h == 24 && m == 0 && s == 0), (0...59).contains(m), (0...59).contains(s) else {
            reader.error(node.mark, "\(path): \"\(text)\" is not a time of day (00:00 to 24:00)")
            return nil
        }
        return seconds
    }

    /// `site: URL` or `site: {url, force, reload_every, idle_timeout, preflight}`.
    static func site(_ node: YAMLNode, path: String, reader: ConfigReader) -> SiteEntry? {
        func web(_ url: String, _ urlNode: YAMLNode, _ where_: String) -> String? {
            let lower = url.lowercased()
            if (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && url.count > 8 && !url.contains(" ") { return url }
            reader.error(urlNode.mark, "\(where_) must be an http:// or https:// URL (a page the TV fetches), not \"\(url)\"")
            return nil
        }
        if case .scalar = node.content, let url = reader.string(node, path: path) {
            return web(url, node, path).map { SiteEntry(url: $0) }
        }
        guard let map = reader.mapping(node, path: path, allowed: ["url", "force", "reload_every", "idle_timeout", "preflight", "receiver"]) else { return nil }
        guard let urlNode = map.require("url"), let text = reader.string(urlNode, path: map.child("url")),
              let url = web(text, urlNode, map.child("url")) else { return nil }
        var site = SiteEntry(url: url)
        site.force = map.bool("force")
        if let v = map.double("reload_every", 0...86_400, unit: "seconds") { site.reloadEvery = v }
        if let v = map.double("idle_timeout", 10...86_400, unit: "seconds") { site.idleTimeout = v }
        if let v = map.bool("preflight") { site.preflight = v }
        if let v = map.choice("receiver", SiteEntry.Receiver.allCases.map(\.rawValue)) {
            site.receiver = .init(rawValue: v)!
            site.receiverMark = map.value("receiver")?.mark
        }
        return site
    }

    static func media(_ node: YAMLNode, path: String, reader: ConfigReader) -> MediaEntry? {
        if case .scalar = node.content, let url = reader.string(node, path: path) {
            return checkedURL(url, node: node, path: path, reader: reader).map { MediaEntry(url: $0) }
        }
        if case .sequence = node.content {
            guard let items = playlistItems(node, path: path, reader: reader) else { return nil }
            var media = MediaEntry(url: items[0])
            media.items = items
            return media
        }
        guard let map = reader.mapping(node, path: path, allowed: [
            "url", "items", "extensions", "repeat", "content_type", "stream_type", "title", "subtitle", "studio", "image", "autoplay",
        ]) else { return nil }
        var media: MediaEntry
        if let itemsNode = map.value("items") {
            guard map.value("url") == nil else {
                reader.error(map.keyMark("items") ?? node.mark, "\(path) has url and items: give one (a folder or playlist file as url, or the items)")
                return nil
            }
            guard let items = playlistItems(itemsNode, path: map.child("items"), reader: reader) else { return nil }
            media = MediaEntry(url: items[0])
            media.items = items
        } else {
            guard let urlNode = map.require("url"), let text = reader.string(urlNode, path: map.child("url")),
                  let url = checkedURL(text, node: urlNode, path: map.child("url"), reader: reader) else { return nil }
            media = MediaEntry(url: url)
        }
        if let v = map.choice("repeat", MediaEntry.RepeatChoice.allCases.map(\.rawValue)) { media.repeatMode = .init(rawValue: v) }
        if let list = map.strings("extensions") {
            media.extensions = list.map { ($0.hasPrefix(".") ? String($0.dropFirst()) : $0).lowercased() }
        }
        media.contentType = map.string("content_type")
        if let v = map.choice("stream_type", MediaEntry.StreamType.allCases.map(\.rawValue)) { media.streamType = .init(rawValue: v) }
        media.title = map.string("title")
        media.subtitle = map.string("subtitle")
        media.studio = map.string("studio")
        media.image = map.string("image")
        if let v = map.bool("autoplay") { media.autoplay = v }
        return media
    }

    /// Whether an http(s) URL has a host (brackets closed for IPv6) and, if any, a numeric port.
    static func hasHost(_ url: String) -> Bool {
        // A URL is printable ASCII: an international name comes punycoded, other bytes percent-encoded.
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        let rest = url.drop(while: { $0 != ":" }).dropFirst(3)
        var authority = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            let after = authority[authority.index(after: close)...]
            return after.isEmpty || (after.hasPrefix(":") && after.count > 1 && after.dropFirst().allSatisfy(\.isNumber))
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty, parts.count <= 2 else { return false }
        return parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isNumber))
    }

    /// A playlist's items: at least one, each an http(s) URL or an absolute file path.
    static func playlistItems(_ node: YAMLNode, path: String, reader: ConfigReader) -> [String]? {
        guard case .sequence(let nodes) = node.content else {
            reader.error(node.mark, "\(path) must be a list of URLs or file paths")
            return nil
        }
        guard !nodes.isEmpty else {
            reader.error(node.mark, "\(path) is an empty list: a playlist needs at least one item")
            return nil
        }
        var items: [String] = []
        for (index, item) in nodes.enumerated() {
            guard let text = reader.string(item, path: "\(path)[\(index)]"),
                  let url = checkedURL(text, node: item, path: "\(path)[\(index)]", reader: reader) else { continue }
            items.append(url)
        }
        return items.count == nodes.count ? items : nil
    }

    /// http(s) URLs and absolute file paths (served by castline's HTTP server).
    static func checkedURL(_ url: String, node: YAMLNode, path: String, reader: ConfigReader) -> String? {
        let lower = url.lowercased()
        if (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && url.count > 8 && !url.contains(" ") && hasHost(url) { return url }
        if url.hasPrefix("/") { return url }
        reader.error(node.mark, "\(path) must be an http:// or https:// URL or an absolute file path, not \"\(url)\"")
        return nil
    }
}
