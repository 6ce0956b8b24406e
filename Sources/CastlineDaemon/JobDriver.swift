import CastlineJobs
import CastCore
import CastProtocol
import CastLogging
import CastlineLocalMedia
import CastSender
import CastlineConfig
import CastlineLogs
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Runs one job: a ``JobStateMachine`` per matching device, fed by what the device's link shows
/// (``DeviceRegistry/observe(_:)``: app, media, owner, connection) and a 1 s tick; its casts go
/// through the same link every other command uses. Isolation: an actor.
package actor JobDriver {
    package nonisolated let job: JobEntry
    let registry: DeviceRegistry
    let events: HubEvents
    let group: EventLoopGroup
    let logSystem: LogSystem
    let log: Logger
    /// Whether the server behind a failed cast's URL is down (``ServerProbe``).
    let serverProbe: ServerProbe
    let defaultAppID: String
    var machines: [String: JobStateMachine] = [:]
    var devices: [String: CastDevice] = [:]
    var watchers: [String: Task<Void, Never>] = [:]
    /// The last observation of each device, and the app session the job's cast runs in.
    var observed: [String: DeviceRegistry.Observation] = [:]
    var appSessions: [String: AppSession] = [:]
    /// The app session that replaced the job's on each device (another sender's, e.g. a stream
    /// transferred there): busy while it runs, even before it reports media.
    var otherSessions: [String: String] = [:]
    var reconnected: Set<String> = []
    /// Each device's latest cast: a cast the machine asked for again supersedes the one under
    /// way, whose outcome is then ignored.
    var castGenerations: [String: Int] = [:]
    /// Where the job's local files are published, and which it may serve.
    let media: MediaPublisher?
    let mediaPolicy: LocalMediaPolicy
    /// What the job published for each device's cast now (one file, or a playlist's files).
    var publications: [String: MediaPublication] = [:]
    /// A playlist job's queue on each device: the items' URLs, the window on the device and
    /// the device's item ids in queue order.
    var playlists: [String: PlaylistQueue] = [:]
    /// Every playlist item's URL (a status showing one of them is the job's).
    var playlistURLs: Set<String> = []
    /// A site job's page as the pre-flight judged it (force, title), by URL: every send of the
    /// page (a cast, a keep-alive, an in-place switch after a reload or an outage) uses it.
    var pageChecks: [String: PageSettings] = [:]
    /// Where to show the content from at the next cast, after a command handed the device back.
    var resumePoints: [String: ResumePoint] = [:]
    /// Announcements waiting for the job to show its content again (``waitUntilShown(_:timeout:)``).
    var shownWaiters: [String: [Int: CheckedContinuation<Bool, Never>]] = [:]
    var nextShownWaiter = 0
    let pluginChannels: PluginChannels?
    /// What the job shows now: the job itself, or (with a schedule) the entry in force or the
    /// fallback; nil when nothing is in force.
    var content: JobEntry?
    /// The schedule's entry in force (-1: none), and when it changes next (Unix seconds).
    var scheduleEntry: Int?
    var nextSwitch: Int64?
    /// Unix seconds now (a test's clock, or the system's).
    let wallClock: @Sendable () -> Int64
    /// What castline knows of each device's field behaviour (idle timeouts, launch times).
    let field: FieldKnowledgeBook?
    /// When the job's app was launched on each device, when castline last sent it something (a
    /// launch, a keep-alive), and the keep-alives since the launch: what an idle close teaches.
    var appClock: [String: AppClock] = [:]
    var stopped = false
    /// An announce job's `at:` timer, whether its announcement plays now, its last run (Unix
    /// seconds and the answer), and how it runs (the control plane, given by the daemon).
    var announcementTimer: AnnouncementTimer?
    var announcing = false
    var lastAnnouncement: (Int64, JSONValue)?
    let announcementRunner: (@Sendable (String) async -> JSONValue)?

    /// `defaultAppID`: the app when the job names none (the config's `receiver_app_id`).
    package init(job: JobEntry, registry: DeviceRegistry, events: HubEvents, defaultAppID: String, group: EventLoopGroup,
                logSystem: LogSystem, media: MediaPublisher? = nil, mediaPolicy: LocalMediaPolicy = .anywhere, pluginChannels: PluginChannels? = nil, field: FieldKnowledgeBook? = nil,
                wallClock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) },
                announcementRunner: (@Sendable (String) async -> JSONValue)? = nil) {
        self.job = job
        self.media = media
        self.mediaPolicy = mediaPolicy
        self.announcementRunner = announcementRunner
        self.wallClock = wallClock
        content = job.schedule == nil ? job : nil
        self.field = field
        self.pluginChannels = pluginChannels
        self.registry = registry
        self.events = events
        self.defaultAppID = defaultAppID
        self.group = group
        self.logSystem = logSystem
        log = Logger(class: "JobDriver", system: logSystem).with(["job": .string(job.name)])
        serverProbe = ServerProbe(group: group, logSystem: logSystem)
    }

    /// What the job shows now (outside every schedule entry without a fallback: the job, unused).
    var active: JobEntry { content ?? job }

    var appID: String {
        guard let site = active.site else { return job.appID ?? defaultAppID }
        return receiverAppID(site) ?? SiteArguments.dashCastApp
    }

    /// The castline receiver's app id when the page shows with it (nil: DashCast).
    func receiverAppID(_ site: SiteEntry? = nil) -> String? {
        (site ?? active.site)?.receiver == .castline ? field?.castlineReceiverAppID : nil
    }

    /// A site job's page as the site route takes it.
    var site: SiteArguments? {
        active.site.map { .page(url: $0.url, force: $0.force, reloadEvery: $0.reloadEvery, check: $0.preflight) }
    }

    /// Whether `device` (with its config aliases) is one of this job's.
    package nonisolated func matches(_ device: CastDevice, aliases: [String]) -> Bool {
        let selectors = job.devices.compactMap { try? DeviceSelector($0) }
        return selectors.contains { $0.matches(name: device.friendlyName, id: device.id, aliases: aliases) }
    }

    /// What of a schedule shows, for the views: `schedule entry N` or `schedule fallback`; nil
    /// for a job without a schedule (or nothing in force).
    var scheduleDetail: String? {
        guard job.schedule != nil, let entry = scheduleEntry, content != nil else { return nil }
        return entry >= 0 ? "schedule entry \(entry + 1)" : "schedule fallback"
    }

    /// The schedule's entry in force (0-based; nil: none) and the next switch (Unix seconds).
    package var scheduleState: (entry: Int?, next: Int64?) {
        (scheduleEntry.flatMap { $0 >= 0 ? $0 : nil }, nextSwitch)
    }

    /// Per device: name, state, casts (for STATUS=, the API and logs).
    package var summary: [(device: String, id: String, state: JobStateMachine.State, casts: Int)] {
        machines.keys.sorted().map { id in (devices[id]?.friendlyName ?? id, id, machines[id]!.state, machines[id]!.casts) }
    }

    package func deviceFound(_ device: CastDevice, aliases: [String]) {
        guard !stopped, matches(device, aliases: aliases) else { return }
        if job.announcement != nil { return announceDeviceFound(device) }
        let known = devices[device.id] != nil
        devices[device.id] = device
        if job.schedule != nil, scheduleEntry == nil { applySchedule() }
        if machines[device.id] == nil, content != nil {
            machines[device.id] = machine(for: device, logKeepAlive: true)
        }
        if !known { log.info("device \(device.friendlyName) matches", ["device": .string(device.id), "deviceName": .string(device.friendlyName)]) }
        if watchers[device.id] == nil {
            watchers[device.id] = watch(device.id)
        } else if let current = observed[device.id], current.link == "connected" {
            feed(device.id, .deviceFound(current: observation(current)))
        }
    }

    package func deviceLost(_ id: String) {
        guard machines[id] != nil else { return }
        log.info("device \(devices[id]?.friendlyName ?? id) lost", ["device": .string(id)])
        feed(id, .deviceLost)
    }

    package func tick() {
        guard !stopped else { return }
        if let announcement = job.announcement { return announcementTick(announcement) }
        if job.schedule != nil { applySchedule() }
        for id in machines.keys.sorted() { feed(id, .tick) }
    }

    /// Stops the job: with `stopCasting`, the app on each device that plays the job's own cast
    /// is stopped (never another sender's); files stop being served.
    /// `releaseClaims`: false when the job restarts under the same name (a reload changed it):
    /// the screens stay the job's for the new driver, with no owner blip between the two.
    package func stop(stopCasting: Bool, releaseClaims: Bool = true) async {
        stopped = true
        await serverProbe.stop()
        for task in watchers.values { task.cancel() }
        watchers = [:]
        for continuation in shownWaiters.values.flatMap(\.values) { continuation.resume(returning: false) }
        shownWaiters = [:]
        for id in devices.keys {
            guard let entry = await registry.entry(id), entry.owner == job.name, releaseClaims || stopCasting else { continue }
            if stopCasting, let link = entry.link {
                do { try await link.stopApplication() } catch {
                    log.warning("cannot stop the cast on \(entry.device.friendlyName): \(error)", ["device": .string(id)])
                }
            }
            await registry.release(id, owner: job.name)
        }
        for id in publications.keys { media?.revoke(id, owner: job.name) }
        publications = [:]
    }

    // MARK: Observations

    private func watch(_ id: String) -> Task<Void, Never> {
        let registry = self.registry
        return Task { [weak self] in
            let updates = await registry.observe(id)
            for await update in updates {
                guard let self else { return }
                await self.observe(update, id: id)
            }
        }
    }

    /// One change of what the device shows, as machine inputs.
    func observe(_ now: DeviceRegistry.Observation, id: String) {
        let before = observed[id]
        observed[id] = now
        guard now.link == "connected" else {
            if now.link == "reconnecting" { reconnected.insert(id) }
            return
        }
        let afterReconnect = reconnected.remove(id) != nil
        if case .waitingForDevice? = machines[id]?.state {
            if before?.link != "connected" || afterReconnect { feed(id, .deviceFound(current: observation(now))) }
            return
        }
        if (before?.castingGroups ?? []) != now.castingGroups {
            feed(id, .groupPlayback(now.castingGroups.first))
        }
        if let ours = appSessions[id], now.app?.sessionID == ours.id {
            appSessions[id]?.seen = true
        } else if let ours = appSessions[id], ours.seen {
            appSessions[id] = nil
            if let other = now.app {
                otherSessions[id] = other.sessionID
                appClock[id] = nil
                feed(id, .sessionEnded(.appReplaced(by: other.appID)))
            } else if afterReconnect {
                appClock[id] = nil
                feed(id, .sessionEnded(.lost("the app session is gone after a reconnect (the device restarted?)")))
            } else {
                noteAppClosed(id)
                feed(id, .sessionEnded(.appStopped))
            }
            return
        }
        if before?.screen != now.screen { feed(id, .screen(now.screen)) }
        if let media = now.media { advancePlaylist(id, media) }
        if otherSessions[id] != now.app?.sessionID { otherSessions[id] = nil }
        feed(id, .media(observation(now, otherSession: otherSessions[id])))
    }

    /// The app session a job's cast runs in. Its end counts once an observation has shown it:
    /// observations taken before the launch completed (the driver takes them in while it waits
    /// on the launch) still show the device without it, and that is not the app stopping.
    struct AppSession {
        var id: String
        var seen = false
    }

    /// The job's cast runs in app session `sessionID` on `id` (launched, or joined: then it is
    /// no longer another sender's).
    func castRuns(in sessionID: String, on id: String) {
        appSessions[id] = AppSession(id: sessionID)
        otherSessions[id] = nil
        startAppClock(id, session: sessionID)
    }

    /// The device's app sessions are no longer followed (the link ended, or the job left it).
    func forgetAppSessions(_ id: String) {
        appSessions[id] = nil
        otherSessions[id] = nil
        appClock[id] = nil
    }

    /// What plays, as the machine sees it: `.noApp` when no app runs, nil when the job's app runs
    /// without media; another app without media
    /// status counts as busy, and so does `otherSession`, another sender's session of the job's
    /// own app that replaced the job's (a stream transferred to the device reports its media
    /// only after the session's switch: until then the device is not free).
    func observation(_ now: DeviceRegistry.Observation, otherSession: String? = nil) -> JobStateMachine.MediaObservation? {
        let held = CommandOwner.isCommand(now.owner)
        // No app at all on a connected device: it is free (an idle screen or backdrop counts as
        // none). Without a connection the device's app is not known.
        guard now.app != nil else { return now.link == "connected" ? .noApp : nil }
        if active.site != nil, receiverAppID() != nil, now.app?.appID == appID, now.app?.sessionID != otherSession {
            // castline's receiver runs: its silent media is its own keep-alive, the page is up.
            return JobStateMachine.MediaObservation(playerState: "APP", isOurs: true, heldByCommand: held)
        }
        if let media = now.media {
            var observation = JobMedia.observation(media, urls: urls, heldByCommand: held)
            // castline cast it for this job (before the config changed what the job shows).
            observation.ownedByJob = !observation.isOurs && now.owner == job.name
            return observation
        }
        if let app = now.app, app.appID != appID || app.sessionID == otherSession {
            return JobStateMachine.MediaObservation(playerState: "APP", isOurs: false, heldByCommand: held)
        }
        if active.site != nil, now.app != nil {
            // DashCast runs and reports no media: the page is up.
            return JobStateMachine.MediaObservation(playerState: "APP", isOurs: true, heldByCommand: held)
        }
        return nil
    }

    var urls: [String] { [active.media.url] + publications.values.flatMap(\.urls) + playlistURLs }

    // MARK: Machine

    func feed(_ id: String, _ input: JobStateMachine.Input) {
        guard !stopped, var machine = machines[id] else { return }
        let before = machine.state
        let actions = machine.handle(input, now: MonotonicClock.seconds())
        machines[id] = machine
        if machine.state != before {
            log.info("\(devices[id]?.friendlyName ?? id): \(before) → \(machine.state)", [
                "device": .string(id), "from": .string(before.description), "to": .string(machine.state.description),
                "input": .string(Self.name(input)),
            ])
            events.emit(.job, machine.state.description, device: id, job: job.name, [
                "from": .string(before.description), "input": .string(Self.name(input)),
            ])
        }
        // What each screen shows, for `logs stats` (proof of display): on screen when the job's
        // cast plays, gone (with the reason) when it stops being so.
        if before != .playing, machine.state == .playing {
            // Found playing the job's content without a cast (after a reload, an outage, a
            // restart): the screen is the job's again.
            if input != .castSucceeded, observed[id]?.owner != job.name {
                let content = observed[id]?.media?.effectiveMedia.map { $0.contentURL ?? $0.contentID } ?? active.media.url
                let detail = scheduleDetail
                Task { await self.registry.claim(id, owner: self.job.name, contentID: content, detail: detail) }
            }
            log.info("\(devices[id]?.friendlyName ?? id): \(active.media.url) on screen", [
                "device": .string(id), "deviceName": .string(devices[id]?.friendlyName ?? id), "page": "shown", "url": .string(active.media.url),
            ])
        } else if before == .playing, machine.state != .playing {
            let why = Self.pageGoneReason(machine, input: input)
            log.info("\(active.media.url) gone from \(devices[id]?.friendlyName ?? id): \(why)", [
                "device": .string(id), "deviceName": .string(devices[id]?.friendlyName ?? id), "page": "gone",
                "url": .string(active.media.url), "reason": .string(why),
            ])
        }
        for action in actions { perform(action, on: id) }
        settleShownWaiters(id)
    }

    /// Why a site job's page left the screen, from the state the machine went to.
    static func pageGoneReason(_ machine: JobStateMachine, input: JobStateMachine.Input) -> String {
        switch (machine.state, input) {
        case (.waitingForDevice, _): return "the device was lost"
        case (.stopped(let reason), _): return reason
        case (.backingOff, .sessionEnded(.lost(let why))): return why
        default: return machine.lastReason
        }
    }

    static func name(_ input: JobStateMachine.Input) -> String {
        switch input {
        case .deviceFound: return "deviceFound"
        case .deviceLost: return "deviceLost"
        case .castSucceeded: return "castSucceeded"
        case .castFailed: return "castFailed"
        case .media: return "media"
        case .sessionEnded: return "sessionEnded"
        case .tick: return "tick"
        case .switched: return "switched"
        case .handBack: return "handBack"
        case .groupPlayback: return "groupPlayback"
        case .launchCancelled: return "launchCancelled"
        case .screen: return "screen"
        }
    }

    // MARK: Schedule

    /// Puts the schedule's entry in force (or the fallback, or nothing) on every device when it
    /// changed: each device's machine starts again with the new content and casts it at once;
    /// with nothing in force, the job's own cast is stopped.
    func applySchedule() {
        guard let schedule = job.schedule else { return }
        let now = wallClock()
        let index = schedule.entry(at: now)
        let key = index ?? -1
        guard key != scheduleEntry else { return }
        let first = scheduleEntry == nil
        scheduleEntry = key
        nextSwitch = schedule.nextSwitch(after: now)
        let next: JobEntry? = index.map { job.showing(job.scheduled[$0]) } ?? job.fallback.map { job.showing($0) }
        let what = index.map { "entry \($0 + 1)" } ?? (job.fallback != nil ? "the fallback" : "no entry")
        let until = nextSwitch.map { " until \(LogTime.rfc3339($0 * 1_000_000_000, fractionDigits: 0))" } ?? ""
        log.info("schedule: \(what) in force\(until)" + (next.map { ": \($0.media.url)" } ?? ": the devices are left idle"), [
            "entry": .int(key), "url": .string(next?.media.url ?? ""),
        ])
        content = next
        // The switch comes on time, not at the next 1 s tick. The clock counts whole seconds and
        // `now` may be late in its second, so sleeping `nextSwitch - now` would land up to a
        // second late: the timer sleeps to a second before the switch, then looks every 50 ms
        // (at most 40 times) for the clock to reach it.
        if let nextSwitch {
            let wait = max(0, nextSwitch - now - 1)
            let clock = wallClock
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(wait))
                for _ in 0..<40 where clock() < nextSwitch {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                await self?.applySchedule()
            }
        }
        guard !first || !machines.isEmpty else { return }
        for id in devices.keys.sorted() {
            playlists[id] = nil
            if let next, let device = devices[id] {
                machines[id] = machine(for: device, job: next)
                if observed[id]?.link == "connected" { feed(id, .switched("schedule: \(what) in force")) }
            } else {
                machines[id] = nil
                forgetAppSessions(id)
                Task { await self.stopOwnCast(id) }
            }
        }
    }

    /// Stops the app on `id` if the job's cast plays there (never another sender's).
    func stopOwnCast(_ id: String) async {
        guard let entry = await registry.entry(id), entry.owner == job.name, let link = entry.link else { return }
        do { try await link.stopApplication() } catch {
            log.warning("cannot stop the cast on \(entry.device.friendlyName): \(error)", ["device": .string(id)])
        }
        await registry.release(id, owner: job.name)
    }

    /// The force and title of the job's page now: the pre-flight's at the last cast, else one
    /// pre-flight now (a page first sent in place, after a reload or an outage), else what the
    /// URL alone says (an http page is always forced: DashCast's https receiver blocks it).
    func pageSettings() async -> PageSettings {
        guard case .page(let url, let asked, _, let check)? = site else { return PageSettings(force: false, title: nil) }
        if let known = pageChecks[url] { return known }
        var settings = PageSettings(force: asked ?? Self.needsForce(url), title: nil)
        if check, let checked = try? await SitePreflight.check(url, group: group) {
            settings.title = checked.title
            if asked == nil, checked.forceReason != nil { settings.force = true }
        }
        pageChecks[url] = settings
        return settings
    }

    /// An http page: DashCast's https receiver blocks it in a frame (mixed content).
    static func needsForce(_ url: String) -> Bool { url.lowercased().hasPrefix("http://") }

    func perform(_ action: JobStateMachine.Action, on id: String) {
        switch action {
        case .cast(let reason):
            countCast(id, reason: reason)
            // A wake launches the job's app again: its old session ends by castline's hand, not
            // another sender's.
            if machines[id]?.lastCause == .screenOff { forgetAppSessions(id) }
            castGenerations[id, default: 0] += 1
            let generation = castGenerations[id]!
            Task { await self.cast(id, reason: reason, generation: generation) }
        case .keepAlive:
            Task { await self.keepAlive(id) }
        case .endSession:
            forgetAppSessions(id)
        case .checkStatus:
            Task {
                guard let link = await registry.entry(id)?.link else { return }
                _ = await link.remoteMediaClient.requestStatus().result
            }
        }
    }

    // MARK: Casting

    func cast(_ id: String, reason: String, generation: Int) async {
        guard let device = devices[id] else { return }
        /// The machine's input, unless a newer cast superseded this one.
        func report(_ input: JobStateMachine.Input) {
            if castGenerations[id] == generation { feed(id, input) }
        }
        log.info("casting to \(device.friendlyName): \(reason)", ["device": .string(id), "reason": .string(reason), "url": .string(active.media.url)])
        if site != nil {
            await showSite(id, device: device, generation: generation)
            return
        }
        if active.media.isPlaylist {
            await castPlaylist(id, device: device, generation: generation)
            return
        }
        let link: CastSession
        do {
            (_, link) = try await registry.link(id)
        } catch {
            log.warning("cannot cast to \(device.friendlyName): \(error)", ["device": .string(id), "error": .string(error.code)])
            report(.castFailed("\(error)"))
            return
        }
        let app: ApplicationInfo
        do {
            app = try await ControlPlane.launch(appID, on: link, device: device, timeout: launchBound(on: device, pageApp: false),
                                                evenIfRunning: machines[id]?.lastCause == .screenOff)
        } catch {
            log.warning("cannot launch app \(appID) on \(device.friendlyName): \(error.message)", ["device": .string(id), "error": .string(error.code)])
            report(Self.launchFailure(error))
            return
        }
        guard castGenerations[id] == generation else { return }
        castRuns(in: app.sessionID, on: id)
        let url: String
        do { url = try await mediaURL(for: device) } catch {
            log.error("cannot serve \(active.media.url) to \(device.friendlyName): \(error)", ["device": .string(id)])
            report(.castFailed("\(error)"))
            return
        }
        await registry.claim(id, owner: job.name, contentID: url, detail: scheduleDetail)
        let resume = resumePoints.removeValue(forKey: id)
        switch await link.remoteMediaClient.loadAndWait(JobMedia.information(active.media, url: url),
                                                        options: MediaLoadOptions(autoplay: active.media.autoplay, startTime: resume?.time),
                                                        until: active.media.autoplay ? .playing : .paused, timeout: 30) {
        case .success:
            log.info("\(device.friendlyName): playing \(active.media.url)", ["device": .string(id), "url": .string(active.media.url)])
            report(.castSucceeded)
        case .failure(let error):
            log.warning("\(device.friendlyName): cast failed: \(error)", ["device": .string(id), "error": .string("\(error)")])
            // The job's own URL: a local file's published URL (castline's server, its token) is not
            // probed; nor is anything once the job stops (its session ended under the load).
            if !stopped {
                Task { [serverProbe, jobURL = active.media.url] in await serverProbe.castFailed(jobURL, device: device, failure: "\(error)") }
            }
            guard castGenerations[id] == generation else { return }
            await registry.release(id, owner: job.name)
            if let refused = publications.removeValue(forKey: id), refused.contains(url) { media?.revoke(id, owner: job.name) }
            report(.castFailed("\(error)"))
        }
    }

    /// A site job's cast: the page checked, then shown through the site route's one path.
    func showSite(_ id: String, device: CastDevice, generation: Int) async {
        guard let site, case .page(let url, let asked, _, let check) = site else { return }
        func report(_ input: JobStateMachine.Input) {
            if castGenerations[id] == generation { feed(id, input) }
        }
        guard let pluginChannels else {
            report(.castFailed("no channel plugins in this hub"))
            return
        }
        do throws(ControlError) {
            var force = asked ?? Self.needsForce(url)
            var title: String?
            if check {
                let checked = try await SitePreflight.check(url, group: group)
                title = checked.title
                if asked == nil, let reason = checked.forceReason {
                    force = true
                    log.info("\(url) is sent with force: \(reason)", ["device": .string(id), "url": .string(url)])
                }
            }
            pageChecks[url] = PageSettings(force: force, title: title)
            let (_, link) = try await registry.link(id)
            let (app, _) = try await SiteShow.show(site, force: force, on: link, device: device, channels: pluginChannels,
                                                   launchTimeout: launchBound(on: device, pageApp: true),
                                                   relaunch: machines[id]?.lastCause == .screenOff, receiverAppID: receiverAppID())
            guard castGenerations[id] == generation else { return }
            castRuns(in: app.sessionID, on: id)
            await registry.claim(id, owner: job.name, contentID: url, page: ShownPage(url: url, title: title, appSession: app.sessionID),
                                 detail: scheduleDetail)
            log.info("\(device.friendlyName): showing \(url)", ["device": .string(id), "url": .string(url), "force": .bool(force)])
            report(.castSucceeded)
        } catch {
            log.warning("\(device.friendlyName): cannot show \(url): \(error.message)", ["device": .string(id), "error": .string(error.code)])
            if error.code == "site_unreachable" || (error.code == "site_http_error" && error.message.contains("answers HTTP 5")) {
                await serverProbe.preflightFailed(url, device: device, reason: error.message)
            }
            report(Self.launchFailure(error))
        }
    }

    /// The URL to load: the job's URL, or for a file its URL published for this device alone
    /// (a fresh token for each cast; the last one's is revoked).
    func mediaURL(for device: CastDevice) async throws(ControlError) -> String {
        let path = active.media.url
        guard path.hasPrefix("/") else { return path }
        let file = try servedFile(path, contentType: active.media.contentType)
        guard let media else { throw ControlError(.internal, "no_media_server", "this hub serves no local files") }
        let name = JobMedia.fileName(path)
        let publication = try await ControlError.localMedia { () async throws(LocalMediaError) in try await media.publish([name: file], to: device, owner: job.name) }
        publications[device.id] = publication
        return publication.url(for: name)
    }

    /// A local file of the job as it is published: allowed (``mediaPolicy``), readable and media.
    func servedFile(_ path: String, contentType: String?) throws(ControlError) -> ServedFile {
        let local = try ControlError.localMedia { () throws(LocalMediaError) in try mediaPolicy.resolve(path) }
        let file: LocalMediaFile
        do { file = try LocalMediaFile.open(local.path, headSize: 4096) } catch { throw ControlError.usage("unreadable_file", "cannot read \(path): \(error)") }
        try ControlPlane.checkIsMedia(path, head: file.head, format: nil)
        return ServedFile(path: local.path, contentType: contentType ?? ContentTypeGuess.forPath(path) ?? "application/octet-stream",
                          root: local.root, displayName: JobMedia.fileName(path))
    }
}
