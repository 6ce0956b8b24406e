import CastlineJobs
import CastlineLocalMedia
import CastCore
import CastLogging
import CastProtocol
import CastlineConfig
import CastSender
import NIOCore
import Synchronization

/// Every device the hub knows, each with one following session (``CastOptions/JoinPolicy/follow``):
/// the one connection castline keeps to it, shared by the jobs, the API and channels. It knows
/// the device's app, volume and media whoever cast them, and survives app changes and drops.
///
/// Isolation: an actor. Links start when a device is found and retry while it stays unreachable;
/// a lost device keeps its link (it reconnects if the device comes back).
package actor DeviceRegistry {
    package struct Entry: Sendable {
        package var device: CastDevice
        package var link: CastSession?
        /// Discovered now (false once discovery reported it gone).
        package var present: Bool
        /// Who cast what plays there now: a job's name, or `api` for a command's cast.
        package var owner: String?
        /// The contentId the owner cast, and whether it has been seen playing.
        package var ownedContent: String?
        var ownedSeen = false
        /// The owner keeps the device until it releases it, whatever plays (an announcement,
        /// until it gives the device back).
        var ownedUntilReleased = false
        /// A page the owner showed (DashCast, a dashboard), in the app session it runs in: the
        /// claim lasts as long as that session does.
        var ownedPage: ShownPage?
        /// The page castline last showed there, for the views: it shows as long as its app session
        /// runs, whoever claims the screen meanwhile (an announcement about to start).
        var shownPage: ShownPage?
        /// What of the owner's plays (a schedule's entry, the fallback), for the views.
        var ownedDetail: String?
        /// Config aliases of the device.
        package var aliases: [String]
        /// The screen's owner as last reported (an event goes out when it changes).
        var reportedOwner: ScreenOwner?
        /// Since when (monotonic seconds) the device, connected once, cannot be reached; nil
        /// while connected or before its first connection.
        package var unreachableSince: Double?
        var everConnected = false
        /// What the link last reported, kept current by its updates: snapshots and observations
        /// read it without a round trip to the link.
        var view = LinkView()
        /// Whether the screen shows the app (nil for a device without a screen), and what it is
        /// read from: the app session since when (monotonic seconds), media last playing.
        var screen: ScreenReading?
        var screenApp: (session: String, since: Double)?
        var lastPlayed: Double?
        /// Wakes the registry when the model's ambient mode is due to cover the app.
        var coverTimer: Task<Void, Never>?
    }

    /// The link's state, app and device status as of its last update.
    struct LinkView: Sendable {
        var state: CastSessionState?
        var app: ApplicationInfo?
        var status: CastDeviceStatus?
        /// A group's members, the groups a device plays for.
        var multizone = MultizoneView()
        /// Where the link is connected (a group's endpoint follows its leader before discovery does).
        var endpoint: String?

        /// The app the device runs: the one the link follows, else the status's first non-idle app.
        var runningApp: ApplicationInfo? {
            guard case .connected? = state else { return app }
            return app ?? status?.applications.first { $0.isIdleScreen != true }
        }

        /// The media status to show: none while the link is connected and no app runs. The
        /// link's media client keeps the last status it had; after a reconnect that finds no
        /// app (the device rebooted) that status is stale, and a job shown it would believe its
        /// media still plays.
        func media(from status: MediaStatus?) -> MediaStatus? {
            if case .connected? = state, runningApp == nil { return nil }
            return status
        }
    }

    /// What a device shows now, as a job sees it.
    package struct Observation: Sendable, Equatable {
        /// connecting, connected, reconnecting, closed.
        package var link: String
        package var app: ApplicationInfo?
        package var media: MediaStatus?
        /// The job or command whose cast plays there.
        package var owner: String?
        /// The speaker groups whose media the device plays now (their names).
        package var castingGroups: [String] = []
        /// Whether the screen shows the app (nil: the device has no screen).
        package var screen: ScreenReading?
    }

    /// The ids of the devices whose link is connected now, readable from any thread without a
    /// hop onto the actor: the static host provider skips its re-probe of these.
    package final class ConnectedIDs: Sendable {
        private let ids = Mutex<Set<String>>([])
        package func contains(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }
        func set(_ id: String, connected: Bool) {
            ids.withLock { if connected { $0.insert(id) } else { $0.remove(id) } }
        }
    }

    package nonisolated let connectedIDs = ConnectedIDs()
    var entries: [String: Entry] = [:]
    private var observers: [String: [Int: AsyncStream<Observation>.Continuation]] = [:]
    private var nextObserver = 0
    private var starting: Set<String> = []
    private let manager: SessionManager
    let log: Logger
    let events: HubEvents
    private let metrics: HubMetrics?
    private var aliasesByEndpoint: [String: [String]]
    /// ``all``'s order: device ids by name (nil: to be sorted again).
    private var byName: [String]?
    /// Each device's API object while nothing in it moves with time (its media is not playing),
    /// reused by listings until the device changes: most of a fleet is idle, and a poller asks
    /// for every device many times per change.
    var listed: [String: JSONValue] = [:]
    private let retryDelay: Double?
    /// Told what each device shows, so that a cast's files stop being served once it moved on.
    private let media: MediaPublisher?
    private var stopped = false
    /// Commands waiting for a device's link, by device: resumed when it connects, when an
    /// attempt to connect fails, or at their deadline.
    private var linkWaiters: [String: [Int: CheckedContinuation<Result<CastSession, ControlError>, Never>]] = [:]
    private var nextWaiter = 0

    /// `options`: session settings (the join policy is set to follow here).
    /// `context`: the sessions' options (a following session each: its join policy is
    /// ``CastOptions/JoinPolicy/follow`` and it keeps no resume record) and event loops.
    /// `retryDelay`: seconds between attempts to connect to an unreachable device; nil: one
    /// attempt (a command's own hub, whose caller hears the failure).
    /// What castline knows of each device's field behaviour (for the screen's reading).
    let field: FieldKnowledgeBook?

    package init(context: CastContext, events: HubEvents, metrics: HubMetrics? = nil,
                aliases: [String: [String]] = [:], retryDelay: Double? = 10, media: MediaPublisher? = nil, field: FieldKnowledgeBook? = nil) {
        self.field = field
        precondition(context.options.joinPolicy == .follow && context.options.sessionResumeFile == nil,
                     "the registry's sessions follow their device")
        self.metrics = metrics
        self.media = media
        self.retryDelay = retryDelay
        manager = context.sessionManager
        log = Logger(class: "DeviceRegistry", system: context.options.logSystem)
        self.events = events
        aliasesByEndpoint = aliases
    }

    // MARK: Discovery

    /// A device was found or updated: known from now on, its link started.
    package func deviceFound(_ device: CastDevice) {
        guard !stopped else { return }
        let known = entries[device.id] != nil
        // A device discovery lost and found again: `found` again (after its `lost`).
        let back = entries[device.id]?.present == false
        var entry = entries[device.id] ?? Entry(device: device, link: nil, present: true, aliases: [])
        entry.device = device
        entry.present = true
        entry.aliases = aliasesByEndpoint[device.endpoint] ?? aliasesByEndpoint["\(device.host):\(device.port)"] ?? []
        if entries[device.id]?.device.friendlyName != device.friendlyName { byName = nil }
        entries[device.id] = entry
        listed[device.id] = nil
        if !known || back {
            log.info("device \(device.friendlyName) found" + (back ? " again" : ""), ["device": .string(device.id), "deviceName": .string(device.friendlyName)])
            events.emit(.device, "found", device: device.id, ["name": .string(device.friendlyName), "address": .string(device.endpoint),
                                                              "again": .bool(back)])
        }
        if entry.link == nil { connect(device.id) }
    }

    /// Discovery reported the device gone: listed as absent; its link keeps trying.
    package func deviceLost(_ id: String) {
        guard var entry = entries[id], entry.present else { return }
        entry.present = false
        entries[id] = entry
        listed[id] = nil
        log.info("device \(entry.device.friendlyName) no longer discovered", ["device": .string(id)])
        events.emit(.device, "lost", device: id, [:])
    }

    /// Config aliases by `host:port` (after a reload).
    package func setAliases(_ aliases: [String: [String]]) {
        aliasesByEndpoint = aliases
        listed = [:]
        for (id, entry) in entries {
            entries[id]?.aliases = aliases[entry.device.endpoint] ?? []
        }
    }

    private func connect(_ id: String) {
        guard !stopped, !starting.contains(id), let device = entries[id]?.device else { return }
        starting.insert(id)
        Task { await self.open(device) }
    }

    private func open(_ device: CastDevice) async {
        defer { starting.remove(device.id) }
        do {
            let link = try await manager.startSession(on: device)
            guard !stopped else { return }
            entries[device.id]?.link = link
            watch(link, id: device.id)
            events.emit(.device, "connected", device: device.id, [:])
            await notify(device.id)
        } catch {
            guard !stopped else { return }
            resumeWaiters(device.id, .failure(ControlError(.unavailable, "device_unreachable", "cannot connect to \(device.friendlyName): \(error)")))
            guard let retryDelay else {
                log.info("cannot connect to \(device.friendlyName): \(error)", ["device": .string(device.id), "error": .string("\(error)")])
                return
            }
            log.warning("cannot connect to \(device.friendlyName): \(error); retrying in \(retryDelay.formatted) s", [
                "device": .string(device.id), "error": .string("\(error)"),
            ])
            try? await Task.sleep(for: .milliseconds(Int(retryDelay * 1000)))
            if entries[device.id]?.link == nil { starting.remove(device.id); connect(device.id) }
        }
    }

    /// A link's session events and status changes become hub events; a link that ends is replaced.
    private func watch(_ link: CastSession, id: String) {
        let updates = link.updates()
        let media = link.remoteMediaClient.statusUpdates()
        Task { [weak self] in
            for await update in updates {
                guard let self else { return }
                switch update {
                case .event(let event, _):
                    // In a task of its own, awaited (so in order): this loop lives as long as the
                    // link, and a task keeps the slabs of its deepest call until it ends, where a
                    // session event's handling is deep and comes only with faults.
                    await Task { await self.sessionEvent(event, id: id, link: link) }.value
                case .multizone(let view):
                    await self.notify(id)
                    self.events.emit(.device, "multizone", device: id, [
                        "members": .array(view.members.map { .string("\($0.name): \($0.playbackState ?? "?")") }),
                        "castingGroups": .array(view.castingGroups.map { .string($0.name) }),
                    ])
                case .deviceStatus(let status):
                    await self.notify(id)
                    self.events.emitState(.device, "status", device: id, [
                        "volume": status.volumeLevel.map { .double($0) } ?? .null, "muted": status.isMuted.map { .bool($0) } ?? .null,
                        "app": status.applications.first { $0.isIdleScreen != true }.map { .string($0.appID) } ?? .null,
                    ])
                }
            }
        }
        Task { [weak self] in
            for await status in media {
                guard let self else { return }
                await self.mediaChanged(status, id: id)
            }
        }
    }

    private func sessionEvent(_ event: CastSessionEvent, id: String, link: CastSession) async {
        events.emit(.session, event.name, device: id, event.fields)
        if case .didResume = event { metrics?.count("reconnects") }
        if case .didEnd = event, entries[id]?.link === link {
            entries[id]?.link = nil
            entries[id]?.view = LinkView()
            connectedIDs.set(id, connected: false)
            readScreen(id, playing: nil)
            if entries[id]?.present == true { connect(id) }
        }
        await notify(id)
    }

    /// Reads the link's state, app and device status into the entry's view (once per change of
    /// the link, so that reading a device never waits on its link).
    private func refresh(_ id: String, _ link: CastSession) async {
        let view = LinkView(state: await link.state, app: await link.application, status: await link.deviceStatus,
                            multizone: await link.multizone, endpoint: await link.device.endpoint)
        guard entries[id]?.link === link else { return }
        entries[id]?.view = view
        listed[id] = nil
        let connected = view.state == .connected
        connectedIDs.set(id, connected: connected)
        if connected {
            entries[id]?.unreachableSince = nil
            entries[id]?.everConnected = true
            // The device restarted (or its app was stopped) under a claim whose media had
            // played: the claim is over (a command's cast does not outlive a reboot).
            if view.runningApp == nil, entries[id]?.ownedSeen == true, entries[id]?.ownedUntilReleased != true { endClaim(id) }
            // A page's claim ends with its app session (another app, or none, replaced it).
            if let page = entries[id]?.ownedPage, entries[id]?.ownedUntilReleased != true, view.runningApp?.sessionID != page.appSession {
                endClaim(id)
            }
            if let page = entries[id]?.shownPage, view.runningApp?.sessionID != page.appSession { entries[id]?.shownPage = nil }
        } else if entries[id]?.everConnected == true, entries[id]?.unreachableSince == nil {
            entries[id]?.unreachableSince = MonotonicClock.seconds()
        }
        readScreen(id, playing: link.remoteMediaClient.mediaStatus.map(Self.isPlaying))
    }


    /// The screen's owner now (``ScreenOwner``).
    func screenOwner(_ entry: Entry) -> ScreenOwner {
        ScreenOwner.derive(connected: entry.link != nil && entry.view.state == .connected, claim: entry.owner,
                           appID: entry.view.runningApp?.appID)
    }

    /// An `owner` event (and an info line) when the screen's owner changed, with the reason.
    private func reportOwner(_ id: String) {
        guard let entry = entries[id] else { return }
        let owner = screenOwner(entry)
        guard owner != entry.reportedOwner else { return }
        let before = entry.reportedOwner
        entries[id]?.reportedOwner = owner
        let reason = owner.reason(appID: entry.view.runningApp?.appID)
        let what = owner.kind == .unknown ? "whose the screen is, is unknown" : owner.kind == .nobody ? "the screen is nobody's" : "the screen is \(owner)'s"
        log.info("\(entry.device.friendlyName): \(what): \(reason)", [
            "device": .string(id), "owner": .string(owner.name ?? "nobody"), "ownerKind": .string(owner.kind.rawValue),
            "before": .string(before?.kind.rawValue ?? "none"), "reason": .string(reason),
        ])
        events.emit(.device, "owner", device: id, [
            "owner": owner.name.map { .string($0) } ?? .null, "ownerKind": .string(owner.kind.rawValue),
            "before": before.map { .string($0.kind.rawValue) } ?? .null, "reason": .string(reason),
        ])
    }

    private func mediaChanged(_ status: MediaStatus?, id: String) async {
        // What the owner cast is over once it has played and then ended or given way to other
        // media (statuses of the media it replaced, before it plays, do not count).
        if let content = entries[id]?.ownedContent, entries[id]?.ownedUntilReleased != true {
            let isOwned = status?.effectiveMedia?.contentID == content
            let finalIdle = status?.playerState == .idle && [.finished, .error, .cancelled].contains(status?.idleReason)
            if isOwned, status?.playerState != .idle {
                entries[id]?.ownedSeen = true
            } else if isOwned, finalIdle {
                // The owner's media ended (or failed) without ever being seen playing (a resumed
                // media at its very end): the claim is over all the same.
                endClaim(id)
            } else if entries[id]?.ownedSeen == true {
                endClaim(id)
            }
        }
        events.emitState(.media, status?.playerState.rawValue ?? "NONE", device: id, status.map { ["mediaStatus": $0.json.redactingServedURLs] } ?? [:])
        await notify(id)
    }

    // MARK: Observers

    /// Every change of what the device shows (link state, app, media, owner), starting with the
    /// current one once its link has connected.
    package func observe(_ id: String) -> AsyncStream<Observation> {
        let (stream, continuation) = AsyncStream.makeStream(of: Observation.self, bufferingPolicy: .bufferingNewest(64))
        nextObserver += 1
        let key = nextObserver
        observers[id, default: [:]][key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeObserver(id, key) } }
        Task { await self.notify(id, only: key) }
        return stream
    }

    private func removeObserver(_ id: String, _ key: Int) {
        observers[id]?[key] = nil
    }

    /// The current observation of a device, nil before its link exists.
    package func observation(_ id: String) -> Observation? {
        guard let entry = entries[id], let link = entry.link, let state = entry.view.state else { return nil }
        return Observation(link: Self.linkName(state), app: entry.view.runningApp, media: entry.view.media(from: link.remoteMediaClient.mediaStatus),
                           owner: entry.owner, castingGroups: entry.view.multizone.castingGroups.map(\.name), screen: entry.screen)
    }

    /// Refreshes the device's view from its link, then gives observers the observation.
    func notify(_ id: String, only key: Int? = nil) async {
        listed[id] = nil
        if let link = entries[id]?.link {
            await refresh(id, link)
            if case .connected? = entries[id]?.view.state, entries[id]?.link === link { resumeWaiters(id, .success(link)) }
        }
        if key == nil { reportOwner(id) }
        if key == nil, let media, let now = observation(id), now.link == "connected" {
            media.deviceShows(id, media: now.media, appRunning: now.app != nil)
        }
        guard let targets = observers[id], !targets.isEmpty, let observation = observation(id) else { return }
        for (k, continuation) in targets where key == nil || k == key { continuation.yield(observation) }
    }

    // MARK: Lookup

    /// The device `reference` names: its id, its name (exact, then ignoring case), or a config alias.
    package func resolve(_ reference: String) throws(ControlError) -> Entry {
        if let entry = entries[reference] { return entry }
        let all = self.all
        if let entry = all.first(where: { $0.device.friendlyName == reference }) { return entry }
        let lowered = reference.lowercased()
        if let entry = all.first(where: { $0.device.friendlyName.lowercased() == lowered || $0.aliases.contains(reference) }) {
            return entry
        }
        if let entry = all.first(where: { $0.device.endpoint == reference || "\($0.device.host):\($0.device.port)" == reference }) {
            return entry
        }
        // A host alone means the Cast port (`castline cast … --device 192.168.1.20`).
        if let entry = all.first(where: { $0.device.host == reference && $0.device.port == 8009 }) { return entry }
        let known = all.prefix(8).map { "\"\($0.device.friendlyName)\"" }.joined(separator: ", ")
        throw ControlError(.notFound, "unknown_device", "no device \"\(reference)\" is known"
                           + (all.isEmpty ? " (none discovered yet)" : "; known: \(known)\(all.count > 8 ? ", …" : "")"))
    }

    /// The connected link of the device `reference` names, waiting up to `timeout` for a link
    /// that is connecting or resuming; an attempt to connect that fails ends the wait with its
    /// reason.
    package func link(_ reference: String, timeout: Double = 10) async throws(ControlError) -> (Entry, CastSession) {
        let entry = try resolve(reference)
        let id = entry.device.id
        if let link = entries[id]?.link, case .connected? = entries[id]?.view.state { return (entries[id] ?? entry, link) }
        guard !stopped else { throw ControlError(.unavailable, "stopping", "castline is stopping") }
        // Connected once and lost since: unreachable now, said at once (a command does not wait
        // out a reconnection it cannot know the end of).
        if let since = entries[id]?.unreachableSince {
            let seconds = Int(max(0, MonotonicClock.seconds() - since))
            throw ControlError(.unavailable, "device_unreachable", "\(entry.device.friendlyName) is unreachable: its connection was lost \(seconds) s ago "
                               + "(\(entries[id]?.present == false ? "not seen by discovery since" : "castline keeps reconnecting"))")
        }
        if entries[id]?.link == nil { connect(id) }
        nextWaiter += 1
        let key = nextWaiter
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            await self?.expireWaiter(id, key)
        }
        let result = await withCheckedContinuation { continuation in
            linkWaiters[id, default: [:]][key] = continuation
        }
        timer.cancel()
        switch result {
        case .success(let link): return (entries[id] ?? entry, link)
        case .failure(let error): throw error
        }
    }

    private func expireWaiter(_ id: String, _ key: Int) {
        guard let continuation = linkWaiters[id]?.removeValue(forKey: key) else { return }
        let name = entries[id]?.device.friendlyName ?? id
        let state = entries[id]?.view.state?.name ?? (entries[id]?.link == nil ? "not connected" : "connecting")
        continuation.resume(returning: .failure(ControlError(.unavailable, "device_unreachable", "\(name) is unreachable (\(state))")))
    }

    private func resumeWaiters(_ id: String, _ result: Result<CastSession, ControlError>) {
        guard let waiting = linkWaiters.removeValue(forKey: id) else { return }
        for continuation in waiting.values { continuation.resume(returning: result) }
    }

    /// Marks the media the device plays now as `owner`'s (a job's name, or a ``CommandOwner``).
    /// The claim ends when its media has played and then ended or given way, or, with
    /// `untilReleased`, only at ``release(_:owner:)``.
    /// `page`: a web page shown in an app session (the claim ends with that session);
    /// `detail`: what of the owner's it is (a schedule's entry), for the views.
    package func claim(_ id: String, owner: String, contentID: String, untilReleased: Bool = false, page: ShownPage? = nil,
                       detail: String? = nil) async {
        entries[id]?.owner = owner
        entries[id]?.ownedContent = contentID
        entries[id]?.ownedSeen = false
        entries[id]?.ownedUntilReleased = untilReleased
        entries[id]?.ownedPage = page
        if let page { entries[id]?.shownPage = page }
        entries[id]?.ownedDetail = detail
        await notify(id)
    }

    package func release(_ id: String, owner: String) async {
        guard entries[id]?.owner == owner else { return }
        endClaim(id)
        await notify(id)
    }

    private func endClaim(_ id: String) {
        entries[id]?.owner = nil
        entries[id]?.ownedUntilReleased = false
        entries[id]?.ownedPage = nil
        entries[id]?.ownedDetail = nil
        entries[id]?.ownedSeen = false
        entries[id]?.ownedContent = nil
    }

    package func entry(_ id: String) -> Entry? { entries[id] }

    /// Every device, by name.
    package var all: [Entry] { sortedIDs().compactMap { entries[$0] } }

    /// The devices any of `selectors` matches (by name, id or alias), by name.
    package func matching(_ selectors: [DeviceSelector]) -> [Entry] {
        all.filter { entry in selectors.contains { $0.matches(name: entry.device.friendlyName, id: entry.device.id, aliases: entry.aliases) } }
    }

    /// The device ids by name, kept until a device is added or renamed (sorting the entries
    /// themselves on every listing copied them around: most of a `GET /v1/devices`).
    private func sortedIDs() -> [String] {
        if let byName { return byName }
        let ids = entries.keys.sorted { (entries[$0]!.device.friendlyName, $0) < (entries[$1]!.device.friendlyName, $1) }
        byName = ids
        return ids
    }

    // MARK: Snapshots

    /// The device's snapshot as its link says it now (after a command: what the device answered).
    package func currentSnapshot(_ id: String, now: Double = MonotonicClock.seconds()) async -> StatusSnapshot? {
        guard let entry = entries[id] else { return nil }
        if let link = entry.link { await refresh(id, link) }
        return snapshot(entries[id] ?? entry, now: now)
    }

    /// Every device's API object (``StatusSnapshot/json(at:)``), by name.
    package func listing(now: Double = MonotonicClock.seconds()) -> [JSONValue] {
        sortedIDs().compactMap { id in
            if let json = listed[id] { return json }
            guard let entry = entries[id] else { return nil }
            let snapshot = snapshot(entry, now: now)
            let json = snapshot.json(at: now)
            // Nothing in it moves with time: not playing media, no cover due.
            if snapshot.media?.effectivePlayerState != .playing, snapshot.unreachableSince == nil, entry.coverTimer == nil { listed[id] = json }
            return json
        }
    }

    /// The device's state as the API shows it (the `status --json` object plus the hub's fields).
    package func snapshot(_ given: Entry, now: Double = MonotonicClock.seconds()) -> StatusSnapshot {
        let entry = entries[given.device.id] ?? given
        var snapshot = StatusSnapshot(deviceName: entry.device.friendlyName, deviceID: entry.device.id,
                                      endpoint: entry.view.endpoint ?? entry.device.endpoint, receivedAt: now)
        snapshot.model = entry.device.modelName.isEmpty ? nil : entry.device.modelName
        snapshot.isGroup = entry.device.isGroup
        let owner = screenOwner(entry)
        snapshot.owner = owner.name
        snapshot.ownerKind = owner.kind.rawValue
        if owner.kind != .unknown {
            snapshot.ownerDetail = entry.ownedDetail
            snapshot.page = entry.shownPage
        }
        snapshot.aliases = entry.aliases
        // Read while connected; otherwise not known (never the last reading).
        snapshot.screen = entry.screen.map { entry.link != nil && entry.view.state == .connected ? $0 : .unknown }
        if let link = entry.link, entry.view.state != .connected {
            // What it shows cannot be seen now: unknown, never the last thing seen.
            snapshot.link = entry.view.state.map(Self.linkName) ?? "connecting"
            snapshot.isUnknown = true
            snapshot.unreachableSince = entry.unreachableSince
            _ = link
        } else if let link = entry.link {
            snapshot.link = entry.view.state.map(Self.linkName) ?? "connecting"
            snapshot.app = entry.view.runningApp
            snapshot.deviceVolume = entry.view.status?.volumeLevel
            snapshot.deviceMuted = entry.view.status?.isMuted
            snapshot.media = entry.view.media(from: link.remoteMediaClient.mediaStatus)
            snapshot.receivedAt = link.remoteMediaClient.statusReceivedAt ?? now
            snapshot.groupMembers = entry.view.multizone.members
            snapshot.castingGroups = entry.view.multizone.castingGroups
            // An endpoint reached by address that lists members is a group, whatever its model.
            if !snapshot.groupMembers.isEmpty { snapshot.isGroup = true }
        } else {
            snapshot.link = entry.present ? "connecting" : "lost"
            snapshot.isUnknown = true
            snapshot.unreachableSince = entry.unreachableSince
        }
        return snapshot
    }

    static func linkName(_ state: CastSessionState) -> String {
        switch state {
        case .connected: return "connected"
        case .idle, .connecting: return "connecting"
        case .suspended, .resuming: return "reconnecting"
        case .ending, .ended, .failed: return "closed"
        }
    }

    // MARK: Shutdown

    /// Ends every link; `stopCasting` devices (by id) get their app stopped first.
    package func shutdown(stopping: Set<String>) async {
        stopped = true
        for id in Array(linkWaiters.keys) { resumeWaiters(id, .failure(ControlError(.unavailable, "stopping", "castline is stopping"))) }
        for (id, entry) in entries {
            guard let link = entry.link else { continue }
            if stopping.contains(id) { try? await link.stopApplication() }
        }
        await manager.shutdown(stopCasting: false)
    }
}

extension CastSessionEvent {
    /// The event's details as JSON fields.
    var fields: [String: JSONValue] {
        switch self {
        case .didSuspend(let reason): return ["reason": .string("\(reason)")]
        case .didEnd(let error?): return ["reason": .string("\(error)")]
        case .didFailToStart(let error): return ["reason": .string("\(error)")]
        case .didResume(let transferred): return ["transferred": .bool(transferred)]
        default: return [:]
        }
    }
}
