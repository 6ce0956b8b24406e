import CastlineJobs
import CastCore
import CastLogging
import CastProtocol
import CastSender
import CastlineConfig
#if canImport(Glibc)
import Glibc
#endif

/// The job's side of the field: what it assumes of each device (``FieldKnowledge``: its idle
/// timeout, what resets it, how long a launch takes), the keep-alive where it helps, what an idle
/// close teaches, and each cast counted with its cause.
extension JobDriver {
    /// The job's app on one device: launched when, last sent something when, keep-alives since.
    struct AppClock {
        var session: String
        var launchedAt: Double
        var lastSent: Double
        var keepAlives = 0
    }

    /// What castline assumes of `device` for this job (its site's own `idle_timeout` first).
    func knowledge(for device: CastDevice, job entry: JobEntry? = nil) -> FieldKnowledge? {
        field?.knowledge(for: device, jobIdleTimeout: (entry ?? active).site?.idleTimeout)
    }

    /// A new state machine for `device` showing `entry` (default: what the job shows now), with
    /// the device's idle timeout and keep-alive policy; `logKeepAlive` says which at info.
    func machine(for device: CastDevice, job entry: JobEntry? = nil, logKeepAlive: Bool = false) -> JobStateMachine {
        let shown = entry ?? active
        guard let knowledge = knowledge(for: device, job: shown) else {
            return JobStateMachine(job: shown, idleTimeout: shown.site?.idleTimeout ?? SiteEntry.defaultIdleTimeout)
        }
        let idle = knowledge.idleTimeout ?? SiteEntry.defaultIdleTimeout
        let ownReceiver = shown.site.flatMap { receiverAppID($0) } != nil
        let machine = JobStateMachine(job: shown, idleTimeout: idle, keepAlive: knowledge.keepAliveResetsTimer && !ownReceiver)
        guard logKeepAlive, shown.site != nil else { return machine }
        if ownReceiver {
            log.info("\(device.friendlyName): no keep-alive: castline's receiver (\(appID)) keeps itself alive with silent media",
                     ["device": .string(device.id), "model": .string(device.modelName), "receiver": .string(appID)])
            return machine
        }
        var fields: LogFields = [
            "device": .string(device.id), "model": .string(device.modelName), "idleTimeout": .double(idle),
            "idleResetBy": .string(knowledge.idleResetBy.rawValue), "profile": .string(knowledge.profile.name),
        ]
        if knowledge.idleTimeout == nil { fields["idleTimeoutAssumed"] = .bool(true) }
        let timeout = knowledge.idleTimeout.map { "idle timeout \((($0 * 10).rounded() / 10).formatted) s" } ?? "no idle close known, \(idle.formatted) s assumed"
        if let interval = machine.keepAliveInterval {
            log.info("\(device.friendlyName): keep-alive every \(((interval * 10).rounded() / 10).formatted) s (\(timeout), \(knowledge.idleTimeoutSource))", fields)
        } else {
            log.info("\(device.friendlyName): no keep-alive: only media resets the idle timer of \(device.modelName.isEmpty ? "this device" : device.modelName) "
                     + "(\(knowledge.idleResetSource)); the page is shown again as soon as the device closes it (\(timeout), \(knowledge.idleTimeoutSource))",
                     fields)
        }
        return machine
    }

    /// How long a launch on `device` may take before it is abandoned (a hang) and retried.
    func launchBound(on device: CastDevice, pageApp: Bool) -> Double? {
        guard let field, let knowledge = knowledge(for: device) else { return nil }
        // Never under 2 s, however compressed the day: a loaded network takes that long to answer.
        return knowledge.launchBound(pageApp: pageApp, floor: max(2, 10 / field.timeScale))
    }

    /// The job's cast runs in app session `session` on `id`: its clock starts (unless it is the
    /// session it already runs in).
    func startAppClock(_ id: String, session: String) {
        guard appClock[id]?.session != session else { return }
        let now = MonotonicClock.seconds()
        appClock[id] = AppClock(session: session, launchedAt: now, lastSent: now)
    }

    /// The job's page app stopped with no sender asking: the device's idle timer, most likely.
    /// What it teaches is kept (``FieldKnowledgeBook/record(_:device:now:)``) and the device's
    /// machine takes the new timeout at its next start.
    func noteAppClosed(_ id: String) {
        guard active.site != nil, let clock = appClock.removeValue(forKey: id), let device = devices[id], let field else { return }
        let now = MonotonicClock.seconds()
        let observation = IdleCloseObservation(sinceMedia: now - clock.launchedAt, sinceLastSend: now - clock.lastSent, keepAlives: clock.keepAlives)
        // A stop within a second of the launch is no idle timer.
        guard observation.sinceMedia >= 1 / field.timeScale else { return }
        field.record(observation, device: device, now: Int64(time(nil)))
    }

    /// Sends a site job's page again (the receiver stops apps that show no media, and on this
    /// device a message resets its timer).
    func keepAlive(_ id: String) async {
        guard let site, let device = devices[id], let pluginChannels else { return }
        let count = machines[id]?.keepAlives ?? 0
        do throws(ControlError) {
            let (_, link) = try await registry.link(id)
            let settings = await pageSettings()
            let (app, _) = try await SiteShow.show(site, force: settings.force, on: link, device: device, channels: pluginChannels,
                                                   launchTimeout: launchBound(on: device, pageApp: true), receiverAppID: receiverAppID())
            if appClock[id]?.session == app.sessionID {
                appClock[id]?.lastSent = MonotonicClock.seconds()
                appClock[id]?.keepAlives += 1
            }
            // The page may be a new one (a reload changed it in place): the views follow.
            if case .page(let url, _, _, _) = site {
                await registry.claim(id, owner: job.name, contentID: url, page: ShownPage(url: url, title: settings.title, appSession: app.sessionID),
                                     detail: scheduleDetail)
            }
            log.info("keep-alive \(count): \(active.media.url) sent again to \(device.friendlyName)", [
                "device": .string(id), "deviceName": .string(device.friendlyName), "page": "kept",
                "url": .string(active.media.url), "keepAlive": .int(Int64(count)),
                "interval": .double(machines[id]?.keepAliveInterval ?? 0),
            ])
            events.emit(.job, "keep-alive", device: id, job: job.name, ["count": .int(Int64(count))])
        } catch {
            // The app's stop, if that is what follows, is observed and recast.
            log.warning("keep-alive \(count) to \(device.friendlyName) failed: \(error)", ["device": .string(id), "error": .string(error.code)])
        }
    }

    /// Each cast counted by its cause (`castline_device_launches_total{reason}`), with a line
    /// that says why.
    func countCast(_ id: String, reason: String) {
        let cause = machines[id]?.lastCause ?? .first
        events.emit(.job, "cast", device: id, job: job.name, ["cause": .string(cause.rawValue), "reason": .string(reason)])
    }

    /// A launch's failure as the machine's input: a `CANCELLED` is retried once at once.
    static func launchFailure(_ error: ControlError) -> JobStateMachine.Input {
        error.code == "superseded" ? .launchCancelled(error.message) : .castFailed(error.message)
    }
}
