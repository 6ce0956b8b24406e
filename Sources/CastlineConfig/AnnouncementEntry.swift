/// An announce job's announcement (`announce:`): what plays, at which volume, for how long at
/// most, and when it plays on its own (`at:` times on `days:` in the job's `timezone:`); without
/// `at:` it plays only when run (`castline jobs run`, `POST /v1/jobs/{name}/run`). Each run
/// announces on every device the job matches, and each device brings back what it showed.
package struct AnnouncementEntry: Sendable, Hashable {
    /// An http(s) URL, or an absolute path the daemon serves.
    package var media: String
    package var contentType: String?
    /// The device volume during the announcement, in percent (nil: as it is).
    package var volume: Int?
    /// Seconds the announcement may play before it is cut short.
    package var timeout = 120.0
    /// When it plays on its own: each entry starts at an `at:` time on the `days:` (an entry
    /// is one second long; only its start matters). nil: only when run.
    package var times: Schedule?

    package init(media: String) { self.media = media }
}

extension CastlineConfiguration {
    /// `announce: {media, volume, content_type, timeout, at, days}`; `zone` is the job's `timezone:`.
    static func announcement(_ node: YAMLNode, zone zoneNode: YAMLNode?, path: String, reader: ConfigReader) -> AnnouncementEntry? {
        guard let map = reader.mapping(node, path: path, allowed: ["media", "volume", "content_type", "timeout", "at", "days"]) else { return nil }
        guard let mediaNode = map.require("media"), let text = reader.string(mediaNode, path: map.child("media")),
              let media = checkedURL(text, node: mediaNode, path: map.child("media"), reader: reader) else { return nil }
        var entry = AnnouncementEntry(media: media)
        entry.volume = map.int("volume", 0...100)
        entry.contentType = map.string("content_type")
        if let seconds = map.double("timeout", 1...3600, unit: "seconds") { entry.timeout = seconds }
        if map.value("days") != nil, map.value("at") == nil {
            reader.error(map.keyMark("days") ?? node.mark, "\(path).days goes with at: (the times the announcement plays on those days)")
        }
        if let atNode = map.value("at") {
            var zone = ZoneRules.utc
            if let zoneNode, let name = reader.string(zoneNode, path: "timezone") {
                do { zone = try ZoneRules.load(name) } catch { reader.error(zoneNode.mark, "timezone: \(error)") }
            }
            let days = map.value("days").map { Self.days($0, path: map.child("days"), reader: reader) } ?? Set(0..<7)
            let texts: [YAMLNode] = if case .sequence(let items) = atNode.content { items } else { [atNode] }
            if texts.isEmpty { reader.error(atNode.mark, "\(path).at is empty: give times such as [\"08:00\", \"12:30\"]") }
            var seen = Set<Int>()
            var entries: [Schedule.Entry] = []
            for (index, timeNode) in texts.enumerated() {
                guard let second = Self.timeOfDay(timeNode, path: "\(map.child("at"))[\(index)]", reader: reader) else { continue }
                guard second < 86_400 else { reader.error(timeNode.mark, "\(map.child("at"))[\(index)]: 24:00 is 00:00 of the next day; write 00:00"); continue }
                guard seen.insert(second).inserted else { reader.error(timeNode.mark, "\(map.child("at"))[\(index)] repeats an earlier time"); continue }
                entries.append(Schedule.Entry(days: days ?? [], from: second, to: second + 1, mark: timeNode.mark))
            }
            if let days, !days.isEmpty, !entries.isEmpty { entry.times = Schedule(entries: entries, zone: zone) }
        }
        return entry
    }
}

extension CastlineConfiguration {
    /// A job with `announce:`: its name, devices, the announcement and its `timezone:`. The keys
    /// of a job that keeps media playing do not apply, and each one given is an error.
    static func announceJob(_ announceNode: YAMLNode, in map: ConfigMapping, path: String, reader: ConfigReader) -> JobEntry? {
        let (name, devices) = jobTarget(map, node: map.node, path: path, reader: reader)
        for key in ["media", "site", "schedule", "fallback", "app_id", "recast_on", "takeover", "reclaim_after", "check_interval", "retry_delay", "screen_off"]
        where map.value(key) != nil {
            let why = ["media", "site", "schedule", "fallback"].contains(key)
                ? "an announce job plays its announce.media (announce.at and days say when)"
                : "it applies to jobs that keep media playing, not to an announce job"
            reader.error(map.keyMark(key) ?? map.node.mark, "\(path).\(key): \(why)")
        }
        let announcement = Self.announcement(announceNode, zone: map.value("timezone"), path: map.child("announce"), reader: reader)
        if map.value("timezone") != nil, let announcement, announcement.times == nil {
            reader.warning(map.keyMark("timezone") ?? map.node.mark, "\(path).timezone has no effect without announce.at")
        }
        guard let name, let devices, let announcement else { return nil }
        var job = JobEntry(name: name, devices: devices, media: MediaEntry(url: announcement.media))
        job.announcement = announcement
        job.mark = map.node.mark
        return job
    }
}
