import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore
import Synchronization

/// A session with a receiver app on one device: the connection, the join-or-launch sequence,
/// heartbeat liveness, reconnects with backoff, requests, the media client and custom channels.
///
/// The life cycle is ``SessionStateMachine``; this actor performs its effects (connect, retry,
/// close, fail pending requests) and feeds the results back. Listeners and ``updates()`` keep
/// working across suspensions and reconnects; requests pending when the connection drops fail
/// with ``CastRequestError/disconnected(_:)``.
public actor CastSession {
    /// Local id for logs (`session` field is the app's sessionId once known).
    public nonisolated let localID: Int
    /// The device the session runs on (changes on transfer).
    public internal(set) var device: CastDevice {
        didSet { presence.withLock { $0.deviceID = device.id } }
    }
    /// Which device the session is on and whether it has ended, readable without a hop onto
    /// the actor: the session manager looks a device's session up among all of them, and an
    /// await per session made each start O(sessions).
    let presence: Mutex<SessionPresence>
    /// Its requests by outcome, over every connection: in the `didEnd` summary.
    let requestCounts = SessionRequestCounts()
    /// The joined or launched app; nil before start and after the app is gone.
    public internal(set) var application: ApplicationInfo? {
        didSet { presence.withLock { $0.appTransportID = application?.transportID } }
    }
    /// The last RECEIVER_STATUS, as device status.
    public internal(set) var deviceStatus: CastDeviceStatus?
    /// A group's members, or the groups this device plays for (the multizone namespace).
    public internal(set) var multizone = MultizoneView()
    /// How the device authenticated on the current connection.
    public internal(set) var deviceAuth: DeviceAuthResult = .notChecked
    /// Device authentication verified the device as audio-only (Cast's audio-only certificate
    /// policy): send it audio only. False when not checked.
    public var isAudioOnly: Bool {
        if case .verified(_, let audioOnly) = deviceAuth { return audioOnly }
        return false
    }
    /// Playback control for the app's media namespace.
    public nonisolated let remoteMediaClient: RemoteMediaClient

    let options: CastOptions
    /// Runs the session's own tasks on its event loop (one loop of the manager's group, for the
    /// session's life), where its connections and its request-timeout timer also run.
    let loopExecutor: EventLoopTaskExecutor
    var loop: EventLoop { loopExecutor.loop }
    var machine: SessionStateMachine
    var connection: CastConnection? {
        didSet { presence.withLock { $0.connection = connection } }
    }
    /// Bumped for every connection attempt; results and messages of older ones are ignored.
    var generation = 0
    /// The last generation handed out: never reused, even when ``generation`` goes back to an
    /// older connection (a failed transfer), so a closed attempt's reader never matches again.
    var generationCounter = 0

    /// A new current generation.
    func bumpGeneration() {
        generationCounter += 1
        generation = generationCounter
    }
    /// The connection work running now, each with the handle that gives its connect up: every
    /// ``openAndJoin(resume:policy:)`` (a start, a reconnect, a transfer's new connection) and
    /// every transfer as a whole (it closes the old connection last). ``end(stopCasting:keepResumeRecord:)``
    /// cancels and awaits them; ``openAttemptsChanged`` hears each one finish.
    var openAttempts: [ObjectIdentifier: CastConnectAttempt] = [:]
    let openAttemptsChanged: EventFanout<Int>

    /// Registers connection work for ``settleOpenAttempts()``; pair with ``finishOpenAttempt(_:)``.
    func beginOpenAttempt() -> CastConnectAttempt {
        let attempt = CastConnectAttempt()
        openAttempts[ObjectIdentifier(attempt)] = attempt
        return attempt
    }

    func finishOpenAttempt(_ attempt: CastConnectAttempt) {
        openAttempts[ObjectIdentifier(attempt)] = nil
        openAttemptsChanged.emit(openAttempts.count)
    }
    var channels: [CastNamespace: GenericChannel] = [:]
    var retryTask: Task<Void, Never>?
    /// Numbers the retries, so that a finished one lets go of its own handle only.
    var retryCount = 0
    /// The app session to re-join on resume.
    var resumeTarget: SessionResumeRecord?
    let resumeStore: SessionResumeStore?
    let listeners = WeakListeners<any CastSessionListener>()
    let fanout: EventFanout<CastSessionUpdate>
    let stateWaiters: EventFanout<CastSessionState>
    var log: Logger
    var keepResumeRecord = false
    /// Where the session may have moved (stream transfer started elsewhere, e.g. from a phone's
    /// output switcher): the devices to look at when the app stops here. Set by the session
    /// manager from discovery.
    var transferCandidates: (@Sendable () async -> [CastDevice])?
    /// While a transfer runs, RECEIVER_STATUS of either device does not end the session.
    var transferring = false {
        didSet { presence.withLock { $0.transferring = transferring } }
    }

    init(localID: Int, device: CastDevice, options: CastOptions, group: EventLoopGroup, resumeStore: SessionResumeStore?,
         resumeTarget: SessionResumeRecord? = nil, transferCandidates: (@Sendable () async -> [CastDevice])? = nil) {
        self.transferCandidates = transferCandidates
        self.localID = localID
        self.device = device
        self.presence = Mutex(SessionPresence(deviceID: device.id, hasEnded: false))
        self.options = options
        self.loopExecutor = EventLoopTaskExecutor(group.next())
        self.machine = SessionStateMachine(policy: options.reconnectPolicy)
        self.resumeStore = resumeStore
        self.resumeTarget = resumeTarget
        self.log = Self.logger(options: options, device: device, localID: localID)
        fanout = EventFanout("session updates", log: log)
        stateWaiters = EventFanout("session states", log: log)
        openAttemptsChanged = EventFanout("connect attempts", log: log)
        self.remoteMediaClient = RemoteMediaClient(logSystem: options.logSystem, device: device.id)
        self.remoteMediaClient.attach(self)
    }

    static func logger(options: CastOptions, device: CastDevice, localID: Int) -> Logger {
        Logger(class: "CastSession", system: options.logSystem).with(logFields(device: device, localID: localID))
    }

    /// The fields on the session's records, and on its connections' request records.
    static func logFields(device: CastDevice, localID: Int) -> LogFields {
        ["device": .string(device.id), "deviceName": .string(device.friendlyName), "endpoint": .string(device.endpoint),
         "localSession": .int(localID)]
    }

    deinit {
        // Released without end(): no retries, no socket left open (the reader task holds the
        // connection, so its own deinit would not run).
        retryTask?.cancel()
        connection?.closeSoon()
    }

    /// Where the session is.
    public var state: CastSessionState { machine.state }

    /// The id of the device the session is on now, read without awaiting the actor.
    public nonisolated var currentDeviceID: String { presence.withLock { $0.deviceID } }

    /// Whether the session has ended or failed (its state is final), read without awaiting the actor.
    public nonisolated var hasEnded: Bool { presence.withLock { $0.hasEnded } }

    /// The transportId of the app the session has joined, nil when none (or the session has
    /// ended), read without awaiting the actor: what a synchronous caller (a plugin's
    /// `send_message`) can check before it queues a message for the app.
    public nonisolated var currentAppTransportID: String? { presence.withLock { $0.hasEnded ? nil : $0.appTransportID } }

    /// The device the session is on now while it is live, nil once it has ended: both read under
    /// one lock (``SessionManager`` asks this of every session on every start).
    nonisolated var liveDeviceID: String? { presence.withLock { $0.hasEnded ? nil : $0.deviceID } }

    /// Adds a listener (held weakly).
    public nonisolated func addListener(_ listener: any CastSessionListener) { listeners.add(listener) }
    public nonisolated func removeListener(_ listener: any CastSessionListener) { listeners.remove(listener) }

    /// Every event and device status from now on, as a stream.
    public nonisolated func updates() -> AsyncStream<CastSessionUpdate> { fanout.stream() }

    // MARK: - Life cycle

    /// Connects and joins or launches the app; returns once the session has started or failed.
    public func start() async throws(CastSessionError) {
        // On the session's loop, where its connection will be: each step's reply resumes the
        // start on the thread that read it (no hop to the global pool and back per step).
        await withTaskExecutorPreference(loopExecutor) { await apply(.start) }
        if case .failed(let error) = machine.state { throw error }
    }

    /// Re-joins the app session in ``resumeTarget`` (a session saved before a process restart);
    /// retries per the reconnect policy while the device is unreachable.
    func resumeSaved() async {
        await apply(.resumeSaved)
    }

    /// Ends the session: `stopCasting` stops the app on the device, otherwise it keeps running
    /// (another sender or a later resume can join it). The app can only be stopped while
    /// connected: ending a suspended session just stops retrying. Returns when the session has
    /// ended (a second caller waits for the first end). `keepResumeRecord`: keep the resume
    /// record (a daemon shutting down that leaves the app running, so the next start resumes it).
    public func end(stopCasting: Bool, keepResumeRecord: Bool = false) async {
        // A second caller (or one after the end) also returns only once the work is settled.
        if machine.state.isFinal {
            await settleOpenAttempts()
            return
        }
        if case .ending = machine.state {
            _ = await waitForState(timeout: 86_400) { $0.isFinal }
            await settleOpenAttempts()
            return
        }
        self.keepResumeRecord = keepResumeRecord && !stopCasting
        await apply(.end(stopCasting: stopCasting))
        await settleOpenAttempts()
    }

    /// Cancels the connection attempts still running (a start or reconnect the end overtook) and
    /// waits until they have returned, so that nothing of this session touches its event loop
    /// once `end` returns: the loop's group may be shut down next (``SessionManager/shutdown(stopCasting:)``).
    /// Bounded: a connect that ignored its cancel still ends by its own timeouts.
    func settleOpenAttempts() async {
        guard !openAttempts.isEmpty else { return }
        let changes = openAttemptsChanged.stream()
        for attempt in openAttempts.values { attempt.cancel() }
        log.debug("waiting for \(openAttempts.count) connection attempt(s) to give up", stateFields())
        let bound = options.longestStart
        if await changes.first(within: bound, where: { $0 == 0 }) == nil {
            if Task.isCancelled {
                log.debug("end's caller was cancelled: not waiting for \(openAttempts.count) connection attempt(s)", stateFields())
            } else {
                log.warning("connection attempts still running \(Int(bound)) s after the end", stateFields())
            }
        }
    }

    /// Waits until `predicate` holds for the state, or `timeout` seconds pass; returns the state.
    public func waitForState(timeout: Double, _ predicate: @escaping @Sendable (CastSessionState) -> Bool) async -> CastSessionState {
        // Subscribed before the check: nothing runs on the actor in between, so no change is missed.
        let stream = stateWaiters.stream()
        if predicate(machine.state) { return machine.state }
        return await stream.first(within: timeout, where: predicate) ?? machine.state
    }

    // MARK: - State machine driver

    func apply(_ input: SessionStateMachine.Input) async {
        let before = machine.state
        let outputs = machine.handle(input)
        if outputs.isEmpty, before == machine.state {
            log.debug("ignored \(input) in state \(before.name)", ["state": .string(before.name)])
            return
        }
        if before != machine.state {
            log.info("state \(before.name) → \(machine.state)", stateFields(["from": .string(before.name)]))
            stateWaiters.emit(machine.state)
            if machine.state.isFinal {
                presence.withLock { $0.hasEnded = true }
                stateWaiters.finish()
            }
        }
        for output in outputs {
            switch output {
            case .event(let event): emit(event)
            case .effect(let effect): await perform(effect)
            }
        }
    }

    func stateFields(_ extra: LogFields = [:]) -> LogFields {
        var fields = extra
        fields["state"] = .string(machine.state.name)
        if let app = application { fields["session"] = .string(app.sessionID) }
        if case .ended(let error?) = machine.state { fields["endReason"] = .string(error.name) }
        if case .failed(let error) = machine.state { fields["endReason"] = .string(error.name) }
        return fields
    }

    func emit(_ event: CastSessionEvent) {
        let level: LogLevel
        switch event {
        case .didFailToStart, .didSuspend: level = .warning
        case .didEnd(let error): level = error == nil ? .info : .warning
        default: level = .info
        }
        var fields = stateFields(["event": .string(event.name)])
        // How long the device had been silent: the report's "not observed" starts then, not
        // at the timeout's end.
        if case .didSuspend(.connectionLost(.heartbeatTimeout(let silent))) = event { fields["silentFor"] = .double((silent * 1000).rounded() / 1000) }
        // The session's summary: its requests, counted at info (traffic records are at debug).
        if case .didEnd = event { for (key, n) in requestCounts.fields { fields[key] = .int(n) } }
        if case .didFailToStart = event { for (key, n) in requestCounts.fields { fields[key] = .int(n) } }
        log.log(level, "\(event)", fields)
        fanout.emit(.event(event, device: device))
        let device = self.device
        for listener in listeners.current {
            switch event {
            case .willStart: listener.sessionWillStart(self)
            case .didStart: listener.sessionDidStart(self)
            case .didFailToStart(let error): listener.session(self, didFailToStartWith: error)
            case .didSuspend(let reason): listener.session(self, didSuspendWith: reason)
            case .willResume: listener.sessionWillResume(self)
            case .didResume(let transferred): listener.session(self, didResumeOn: device, transferred: transferred)
            case .willEnd: listener.sessionWillEnd(self)
            case .didEnd(let error): listener.session(self, didEndWith: error)
            }
        }
        switch event {
        case .didEnd, .didFailToStart:
            // Nothing follows the final event: streams end so `for await` loops finish.
            remoteMediaClient.sessionEnded()
            fanout.finish()
        default:
            break
        }
    }

    func perform(_ effect: SessionStateMachine.Effect) async {
        switch effect {
        case .connect(let resume):
            await runConnect(resume: resume)
        case .scheduleRetry(let delay, let attempt):
            retryTask?.cancel()
            log.info("reconnect attempt \(attempt) in \(Int(delay * 1000)) ms", stateFields([
                "attempt": .int(attempt), "delayMs": .int(Int(delay * 1000)),
            ]))
            retryCount += 1
            let retry = retryCount
            retryTask = Task { [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                guard !Task.isCancelled else { return }
                await self?.apply(.retryDue)
                await self?.retryFinished(retry)
            }
        case .cancelRetry:
            retryTask?.cancel()
            retryTask = nil
            bumpGeneration()
        case .failPendingRequests(let why):
            // Those that went out on a connection that ended have failed with it already.
            connection?.failPendingRequests(why)
        case .close(let stopApp):
            await closeConnection(stopApp: stopApp)
            if case .ending = machine.state { await apply(.endFinished) }
        case .saveResumeRecord:
            guard let resumeStore, let app = application else { return }
            let record = SessionResumeRecord(device: device, appID: app.appID, sessionID: app.sessionID, transportID: app.transportID)
            await changeResumeFile(resumeStore, "save") { try $0.save(record) }
        case .deleteResumeRecord:
            guard let resumeStore, !keepResumeRecord else { return }
            let deviceID = device.id
            await changeResumeFile(resumeStore, "delete") { try $0.remove(deviceID: deviceID) }
        }
    }

    /// A retry that has run lets go of its handle: a finished task keeps the slabs its deepest
    /// call needed (the whole reconnect, tens of KB) for as long as anything holds its handle.
    func retryFinished(_ retry: Int) {
        if retry == retryCount { retryTask = nil }
    }

    /// One change to the resume file, off the event loop (the store writes and fsyncs, and a
    /// loop must not wait on a disk); a failure is logged.
    private func changeResumeFile(_ store: SessionResumeStore, _ verb: String,
                                  _ body: (SessionResumeStore) throws -> Void) async {
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            do { try body(store) } catch {
                log.warning("cannot \(verb) the resume record: \(error)", ["path": .string(store.path)])
            }
        }
    }

}

/// What ``CastSession/presence`` holds.
struct SessionPresence: Sendable {
    var deviceID: String
    var hasEnded: Bool
    var appTransportID: String? = nil
    /// The current connection and whether a transfer runs: what ``CastSession/enqueue(namespace:destination:payload:completion:)``
    /// reads without a hop onto the actor.
    var connection: CastConnection? = nil
    var transferring = false
}
