import CastCore

extension JobEntry {
    /// What one job's text may expand to (aliases at their expanded size): an API body is at most
    /// 1 MiB, and so is the job it stands for.
    package static let maximumBytes = 1 << 20

    /// A job from YAML or JSON text (an API request body, the jobs file), checked like a config
    /// job: every problem at `source`:line:column. `name` (from the request path) is the job's
    /// name; a `name` in the text must match it.
    package static func parse(_ text: String, source: String, name: String? = nil) throws(ConfigErrors) -> JobEntry {
        var root: YAMLNode
        do { root = try YAMLParser.parse(text, maximumBytes: maximumBytes) } catch {
            throw ConfigErrors([ConfigDiagnostic(file: source, mark: error.mark, message: "syntax: \(error.message)")])
        }
        let reader = ConfigReader(file: source)
        if let name {
            if case .mapping(var pairs) = root.content {
                if let given = pairs.first(where: { $0.key.scalarText == "name" }) {
                    if given.value.scalarText != name {
                        reader.error(given.value.mark, "the job's name is \"\(name)\" (from the path); the body says \"\(given.value.scalarText ?? "?")\"")
                    }
                } else {
                    pairs.append(YAMLPair(key: YAMLNode(.scalar("name", plain: true), mark: root.mark),
                                          value: YAMLNode(.scalar(name, plain: false), mark: root.mark)))
                    root = YAMLNode(.mapping(pairs), mark: root.mark)
                }
            }
        }
        let job = CastlineConfiguration.job(root, path: "job", reader: reader)
        if let job, !reader.hasErrors, CastlineConfiguration.isJobName(job.name) { return job }
        if let job, !CastlineConfiguration.isJobName(job.name) {
            reader.error(root.mark, "job name \"\(job.name)\" must be 1-64 letters, digits, '-', '_' or '.'")
        }
        throw ConfigErrors(reader.diagnostics)
    }

    /// The job as JSON, with the config's keys (what `GET /v1/jobs/{name}` shows and the jobs file keeps).
    package var json: JSONValue {
        var o = JSONObject()
        o.set("name", .string(name))
        o.set("devices", .array(devices.map { .string($0) }))
        if let announcement {
            var a = JSONObject()
            a.set("media", .string(announcement.media))
            if let v = announcement.volume { a.set("volume", .int(Int64(v))) }
            if let v = announcement.contentType { a.set("content_type", .string(v)) }
            a.set("timeout", .double(announcement.timeout))
            if let times = announcement.times, let days = times.entries.first?.days {
                a.set("at", .array(times.entries.map { .string(Self.clock($0.from)) }))
                a.set("days", Self.daysJSON(days))
                o.set("timezone", .string(times.zone.name))
            }
            o.set("announce", .object(a))
            return .object(o)
        }
        if let appID { o.set("app_id", .string(appID)) }
        if let schedule {
            o.set("timezone", .string(schedule.zone.name))
            o.set("schedule", .array(zip(schedule.entries, scheduled).map { entry, content in
                var e = JSONObject()
                e.set("days", Self.daysJSON(entry.days))
                e.set("from", .string(Self.clock(entry.from)))
                e.set("to", .string(Self.clock(entry.to)))
                for (key, value) in Self.contentJSON(content) { e.set(key, value) }
                return .object(e)
            }))
            if let fallback { o.set("fallback", .object(JSONObject(Self.contentJSON(fallback)))) }
        } else if let site {
            var page = JSONObject()
            page.set("url", .string(site.url))
            if let force = site.force { page.set("force", .bool(force)) }
            if site.reloadEvery > 0 { page.set("reload_every", .double(site.reloadEvery)) }
            if let idle = site.idleTimeout { page.set("idle_timeout", .double(idle)) }
            if !site.preflight { page.set("preflight", .bool(false)) }
            if site.receiver != .dashcast { page.set("receiver", .string(site.receiver.rawValue)) }
            o.set("site", .object(page))
        } else {
            o.set("media", mediaJSON)
        }
        o.set("recast_on", .array(Trigger.allCases.filter { recastOn.contains($0) }.map { .string($0.rawValue) }))
        o.set("takeover", .string(takeover.rawValue))
        o.set("screen_off", .string(screenOff.rawValue))
        if let reclaimAfter { o.set("reclaim_after", .double(reclaimAfter)) }
        o.set("check_interval", .double(checkInterval))
        o.set("retry_delay", .double(retryDelay))
        if sync { o.set("sync", true) }
        return .object(o)
    }

    static func daysJSON(_ days: Set<Int>) -> JSONValue {
        .array((0..<7).filter(days.contains).map { .string(CastlineConfiguration.dayNames[$0]) })
    }

    /// `HH:MM:SS` for seconds after midnight.
    static func clock(_ seconds: Int) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    static func contentJSON(_ content: Content) -> [(String, JSONValue)] {
        var pairs: [(String, JSONValue)] = []
        if let media = content.media {
            var job = JobEntry(name: "", devices: [], media: media)
            job.site = nil
            pairs.append(("media", job.mediaJSON))
        }
        if let site = content.site {
            var job = JobEntry(name: "", devices: [], media: MediaEntry(url: site.url))
            job.site = site
            if let page = job.json["site"] { pairs.append(("site", page)) }
        }
        return pairs
    }

    var mediaJSON: JSONValue {
        var m = JSONObject()
        if let items = media.items { m.set("items", .array(items.map { .string($0) })) } else { m.set("url", .string(media.url)) }
        if let v = media.repeatMode { m.set("repeat", .string(v.rawValue)) }
        if let v = media.extensions { m.set("extensions", .array(v.map { .string($0) })) }
        if let v = media.contentType { m.set("content_type", .string(v)) }
        if let v = media.streamType { m.set("stream_type", .string(v.rawValue)) }
        if let v = media.title { m.set("title", .string(v)) }
        if let v = media.subtitle { m.set("subtitle", .string(v)) }
        if let v = media.studio { m.set("studio", .string(v)) }
        if let v = media.image { m.set("image", .string(v)) }
        if !media.autoplay { m.set("autoplay", .bool(false)) }
        return .object(m)
    }
}

extension YAMLNode {
    /// The text of a scalar node, nil for other nodes.
    var scalarText: String? {
        if case .scalar(let text, _) = content { return text }
        return nil
    }
}

extension CastlineConfiguration {
    /// Job names: what an API path and a file name can carry safely.
    package static func isJobName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x2E
        }
    }
}
