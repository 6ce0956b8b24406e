import CastCore
import CastLogging

extension DaemonSettings {
    /// The profile castline assumes for a device of `model` before it has seen the device do
    /// anything: the first `daemon.field_profiles` entry whose glob matches the model (its named
    /// profile, and its overrides on top), else the model's own (``FieldProfile/forModel(_:isVideoDevice:)``).
    /// Not scaled by `field_time_scale`.
    package func assumedProfile(model: String, isVideoDevice: Bool) -> (profile: FieldProfile, override: FieldProfileOverride?) {
        let override = fieldProfiles.first { (try? GlobPattern($0.model))?.matches(model) == true }
        var profile = override?.profile.flatMap(FieldProfile.named) ?? FieldProfile.forModel(model, isVideoDevice: isVideoDevice)
        if let timeout = override?.idleTimeout { profile.appIdleTimeout = timeout }
        if let reset = override?.idleResetBy { profile.idleResetBy = reset }
        return (profile, override)
    }
}

/// A job that shows a page on a device whose idle timer only media resets: nothing castline can
/// send keeps the page up, and it is shown again after each close (with the launch's chime).
package struct PageWithoutKeepAlive: Sendable, Equatable {
    package var jobIndex: Int
    package var job: String
    package var device: String
    package var model: String
    package var profile: String
    package var idleTimeout: Double?

    /// One sentence for `doctor` and `config check`.
    package var message: String {
        let after = idleTimeout.map { " about every \($0.formatted) s" } ?? ""
        return "jobs[\(jobIndex)] \"\(job)\" shows a page on \(device) (model \(model.isEmpty ? "unknown" : model), profile \(profile)): "
            + "only media resets that model's idle timer, so no keep-alive can hold the page; castline shows it again as soon as "
            + "the device closes it\(after), each time with the launch's chime. To keep it up: the castline receiver "
            + "(docs/receiver.md); if your device behaves otherwise, daemon.field_profiles says so"
    }
}

extension CastlineConfiguration {
    /// The jobs that show a page (a site, or a schedule entry or fallback with one) on the device
    /// named `device` (id, aliases) of `model`, where only media resets the idle timer.
    package func pagesWithoutKeepAlive(device: String, id: String, aliases: [String], model: String,
                                      isVideoDevice: Bool = true) -> [PageWithoutKeepAlive] {
        let (profile, _) = daemon.assumedProfile(model: model, isVideoDevice: isVideoDevice)
        guard profile.idleResetBy == .media else { return [] }
        var found: [PageWithoutKeepAlive] = []
        for (index, job) in jobs.enumerated() where job.announcement == nil {
            // castline's receiver keeps itself alive: only DashCast pages count.
            let sites = [job.site] + job.scheduled.map(\.site) + [job.fallback?.site]
            let showsPage = sites.contains { $0?.receiver == .dashcast }
            guard showsPage else { continue }
            // A job's own idle_timeout speaks of the timeout, not of what resets it.
            let selectors = job.devices.compactMap { try? DeviceSelector($0) }
            guard selectors.contains(where: { $0.matches(name: device, id: id, aliases: aliases) }) else { continue }
            found.append(PageWithoutKeepAlive(jobIndex: index, job: job.name, device: device, model: model, profile: profile.name,
                                              idleTimeout: profile.appIdleTimeout))
        }
        return found
    }

    /// `config check`'s field warnings: pages that no keep-alive can hold on the devices listed
    /// under `devices:` with a model (their models are known without asking them).
    package func fieldWarnings() -> [ConfigDiagnostic] {
        devices.flatMap { entry -> [ConfigDiagnostic] in
            guard let model = entry.model else { return [] }
            return pagesWithoutKeepAlive(device: entry.name, id: entry.id ?? "", aliases: entry.aliases, model: model).map {
                ConfigDiagnostic(file: file, mark: jobs[$0.jobIndex].mark, severity: .warning, message: $0.message)
            }
        }
    }
}
