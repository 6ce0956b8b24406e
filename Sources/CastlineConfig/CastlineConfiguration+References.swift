/// Where a job's device globs and media URL are in the file, for the checks that run after
/// decoding (``CastlineConfiguration/referenceWarnings(localFileProblem:)``). Value type.
package struct JobSourceMarks: Sendable, Hashable {
    /// One mark per entry of ``JobEntry/devices``, in order.
    package var devices: [SourceMark] = []
    /// The `media` scalar or `media.url` value; for an announce job, `announce.media`.
    package var url: SourceMark?

    package init(devices: [SourceMark] = [], url: SourceMark? = nil) {
        self.devices = devices
        self.url = url
    }

    /// The marks in a job's YAML node; absent parts stay empty (decoding reports them).
    static func of(_ node: YAMLNode) -> JobSourceMarks {
        var marks = JobSourceMarks()
        guard case .mapping(let pairs) = node.content else { return marks }
        for pair in pairs {
            switch (pair.key.scalarText, pair.value.content) {
            case ("devices", .sequence(let items)): marks.devices = items.map(\.mark)
            case ("devices", .scalar): marks.devices = [pair.value.mark]
            case ("media", .scalar): marks.url = pair.value.mark
            case ("media", .mapping(let media)): marks.url = media.first { $0.key.scalarText == "url" }?.value.mark
            case ("announce", .mapping(let announce)): marks.url = announce.first { $0.key.scalarText == "media" }?.value.mark
            default: break
            }
        }
        return marks
    }
}

extension CastlineConfiguration {
    /// Whether discovery can find only the devices listed under `devices:` (no mDNS, no discovery
    /// plugin): `discovery.autostart: false`, or `discovery.providers` naming `static` alone.
    package var discoversConfiguredDevicesOnly: Bool {
        if !discovery.autostart { return true }
        guard let providers = discovery.providers, !providers.isEmpty else { return false }
        return providers.allSatisfy { $0 == "static" }
    }

    /// What the file refers to that the file alone cannot satisfy, as warnings (the daemon still
    /// starts): a job device glob that matches no configured device when discovery is limited to
    /// those devices (with mDNS a matching device may appear later, so nothing is said), and a
    /// job's local file or folder (an absolute `media.url`, an announce job's `announce.media`)
    /// for which `localFileProblem` says what is wrong (nil: usable). It is given the path and
    /// the job's `media.extensions` (a folder is a playlist of its media files, not a file to
    /// read). Pure apart from `localFileProblem`.
    package func referenceWarnings(localFileProblem: (_ path: String, _ extensions: [String]?) -> String?) -> [ConfigDiagnostic] {
        var found: [ConfigDiagnostic] = []
        let why = discovery.autostart ? "discovery.providers: [static]" : "discovery.autostart: false"
        for (index, job) in jobs.enumerated() {
            let marks = jobMarks[job.name] ?? JobSourceMarks()
            if discoversConfiguredDevicesOnly, !devices.isEmpty {
                for (position, pattern) in job.devices.enumerated() {
                    guard let selector = try? DeviceSelector(pattern) else { continue }
                    let matched = devices.contains { selector.matches(name: $0.name, id: $0.id ?? "", aliases: $0.aliases) }
                    guard !matched else { continue }
                    let mark = position < marks.devices.count ? marks.devices[position] : job.mark
                    found.append(ConfigDiagnostic(file: file, mark: mark, severity: .warning, message:
                        "jobs[\(index)].devices[\(position)] \"\(pattern)\" matches no name, alias or id under devices:, and "
                        + "discovery finds only those devices (\(why)): the job has no device to cast to unless a listed "
                        + "device's id (learned when it answers) matches; add the device under devices:, or let discovery use mDNS"))
                }
            }
            if job.media.url.hasPrefix("/"), let problem = localFileProblem(job.media.url, job.media.extensions) {
                let key = job.announcement != nil ? "jobs[\(index)].announce.media" : "jobs[\(index)].media.url"
                found.append(ConfigDiagnostic(file: file, mark: marks.url ?? job.mark, severity: .warning, message:
                    "\(key): \(problem): the job cannot serve it to the device"))
            }
        }
        return found
    }
}
