import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

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
    public private(set) var device: CastDevice
    /// The joined or launched app; nil before start and after the app is gone.
    public private(set) var application: ApplicationInfo?
    /// The last RECEIVER_STATUS, as device status.
    public private(set) var deviceStatus: CastDeviceStatus?
    /// How the device authenticated on the current connection.
    public private(set) var deviceAuth: DeviceAuthResult = .notChecked
    /// Device authentication verified the device as audio-only (Cast's audio-only certificate
    /// policy): send it audio only. False when not checked.
    public var isAudioOnly: Bool {
        if case .verified(_, let audioOnly) = deviceAuth { return audioOnly }
        return false
    }
    /// Playback control for the app's media namespace.
    public nonisolated let remoteMediaClient: RemoteMediaClient

    let options: CastOptions
    private let group: EventLoopGroup
    private var machine: SessionStateMachine
    private var connection: CastConnection?
    /// Bumped for every connection attempt; results and messages of older ones are ignored.
    private var generation = 0
    /// The last generation handed out: never reused, even when ``generation`` goes back to an
    /// older connection (a failed transfer), so a closed attempt's reader never matches again.
    private var generationCounter = 0

    /// A new current generation.
    private func bumpGeneration() {
        generationCounter += 1
        generation = generationCounter
    }
    private var tracker = RequestTracker<RequestSink>()
    private var channels: [CastNamespace: GenericChannel] = [:]
    private var retryTask: Task<Void, Never>?
    /// The app session to re-join on resume.
    private var resumeTarget: SessionResumeRecord?
    private let resumeStore: SessionResumeStore?
    private let listeners = WeakListeners<any CastSessionListener>()
    private let fanout = EventFanout<CastSessionUpdate>()
    private let stateWaiters = EventFanout<CastSessionState>()
    private var log: Logger
    private var keepResumeRecord = false
    /// While a transfer runs, RECEIVER_STATUS of either device does not end the session.
    private var transferring = false

    init(localID: Int, device: CastDevice, options: CastOptions, group: EventLoopGroup, resumeStore: SessionResumeStore?,
         resumeTarget: SessionResumeRecord? = nil, transferCandidates: (@Sendable () async -> [CastDevice])? = nil) {
        self.transferCandidates = transferCandidates
        self.localID = localID
        self.device = device
        self.options = options
        self.group = group
        self.machine = SessionStateMachine(policy: options.reconnectPolicy)
        self.resumeStore = resumeStore
        self.resumeTarget = resumeTarget
        self.log = Self.logger(options: options, device: device, localID: localID)
        self.remoteMediaClient = RemoteMediaClient(logSystem: options.logSystem, device: device.id)
        self.remoteMediaClient.attach(self)
    }

    private static func logger(options: CastOptions, device: CastDevice, localID: Int) -> Logger {
        Logger(class: "CastSession", system: options.logSystem).with([
            "device": .string(device.id), "deviceName": .string(device.friendlyName), "endpoint": .string(device.endpoint),
            "localSession": .int(localID),
        ])
    }

    /// Where the session is.
    public var state: CastSessionState { machine.state }

    /// Adds a listener (held weakly).
    public nonisolated func addListener(_ listener: any CastSessionListener) { listeners.add(listener) }
    public nonisolated func removeListener(_ listener: any CastSessionListener) { listeners.remove(listener) }

    /// Every event and device status from now on, as a stream.
    public nonisolated func updates() -> AsyncStream<CastSessionUpdate> { fanout.stream() }

    // MARK: - Life cycle

    /// Connects and joins or launches the app; returns once the session has started or failed.
    public func start() async throws(CastSessionError) {
        await apply(.start)
        if case .failed(let error) = machine.state { throw error }
    }

    /// Re-joins the app session in ``resumeTarget`` (a session saved before a process restart);
    /// retries per the reconnect policy while the device is unreachable.
    func resumeSaved() async {
        await apply(.resumeSaved)
    }

    /// Ends the session: `stopCasting` stops the app on the device, otherwise it keeps running
    /// (another sender or a later resume can join it). Returns when the session has ended.
    /// `keepResumeRecord`: keep the resume record (a daemon shutting down that leaves the app
    /// running, so the next start resumes it).
    public func end(stopCasting: Bool, keepResumeRecord: Bool = false) async {
        self.keepResumeRecord = keepResumeRecord && !stopCasting
        await apply(.end(stopCasting: stopCasting))
    }

    /// Waits until `predicate` holds for the state, or `timeout` seconds pass; returns the state.
    public func waitForState(timeout: Double, _ predicate: @escaping @Sendable (CastSessionState) -> Bool) async -> CastSessionState {
        if predicate(machine.state) { return machine.state }
        let stream = stateWaiters.stream()
        let current = machine.state
        if predicate(current) { return current }
        return await stream.first(within: timeout, where: predicate) ?? machine.state
    }

    /// Moves the session to `target`: reads the media status here, launches the app there, loads
    /// the same media at the same position (and tracks), then stops the app here. Listeners get
    /// ``CastSessionEvent/didResume(transferred:)`` with the new ``device``.
    public func transfer(to target: CastDevice) async throws(CastSessionError) {
        guard case .connected = machine.state, let app = application else {
            throw .requestFailed(step: "transfer", .disconnected("the session is \(machine.state.name)"))
        }
        let status = try await mediaStatusForTransfer()
        let moved: Result<Void, CastSessionError> = await Self.$movingRequest.withValue(true) {
            do throws(CastSessionError) {
                try await moveSession(to: target, app: app, status: status)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try moved.get()
    }

    private func moveSession(to target: CastDevice, app: ApplicationInfo, status: MediaStatus?) async throws(CastSessionError) {
        transferring = true
        defer { transferring = false }
        log.info("transferring to \(target)", ["target": .string(target.id)])
        let previous: DeviceSnapshot
        do {
            previous = try await switchDevice(to: target, policy: .joinOrLaunch)
        } catch {
            log.warning("transfer to \(target) failed: \(error); staying on \(device)", ["target": .string(target.id)])
            throw error
        }
        if let status, let media = status.media {
            let load = await remoteMediaClient.load(media, options: MediaLoadOptions(
                autoplay: status.playerState != .paused, startTime: status.currentTime, activeTrackIDs: status.activeTrackIds,
                playbackRate: status.playbackRate))
            if case .failure(let error) = await load.result {
                log.warning("transfer: LOAD on \(target) failed: \(error)", ["target": .string(target.id)])
            }
        }
        // Stop the app on the old device over the old connection, then let it go.
        if let oldConnection = previous.connection {
            let stop = ReceiverMessage.stop(requestId: RequestID(1), sessionId: app.sessionId).json
            try? await oldConnection.send(CastMessage(source: options.senderID, destination: EndpointID.receiver0.rawValue,
                                                      namespace: .receiver, json: stop))
            await oldConnection.close()
        }
        log.info("transferred from \(previous.device) to \(target)", ["from": .string(previous.device.id), "to": .string(target.id)])
        await apply(.transferred)
    }

    /// What ``switchDevice(to:policy:)`` replaced, to put back.
    private struct DeviceSnapshot {
        let device: CastDevice
        let connection: CastConnection?
        let application: ApplicationInfo?
        let generation: Int
        let mediaStatus: MediaStatus?
    }

    /// Connects to `target` and joins (or launches, per `policy`) the app there in place of the
    /// current device. On failure everything is as before and the error is thrown.
    private func switchDevice(to target: CastDevice, policy: CastOptions.JoinPolicy) async throws(CastSessionError) -> DeviceSnapshot {
        let previous = DeviceSnapshot(device: device, connection: connection, application: application, generation: generation,
                                      mediaStatus: remoteMediaClient.mediaStatus)
        bumpGeneration()
        device = target
        log = Self.logger(options: options, device: target, localID: localID)
        do {
            application = try await openAndJoin(resume: nil, policy: policy)
            return previous
        } catch {
            await restore(previous)
            throw error
        }
    }

    /// Back to the device, connection and app of `previous` (closing the connection made since).
    private func restore(_ previous: DeviceSnapshot) async {
        // Switch back first: the attempt's reader must find its generation stale when it ends.
        let attempt = connection
        connection = previous.connection
        application = previous.application
        device = previous.device
        generation = previous.generation
        log = Self.logger(options: options, device: previous.device, localID: localID)
        remoteMediaClient.apply(previous.mediaStatus.map { [$0] } ?? [])
        if let attempt, attempt !== previous.connection { await attempt.close() }
    }

    /// Set for the session's own requests while it moves between devices (``transferring``):
    /// anything else is refused then, so no command reaches a device the session is only probing.
    @TaskLocal static var movingRequest = false

    /// Where the session may have moved (stream transfer started elsewhere, e.g. from a phone's
    /// output switcher): the devices to look at when the app stops here. Set by the session
    /// manager from discovery.
    private var transferCandidates: (@Sendable () async -> [CastDevice])?

    func setTransferCandidates(_ provider: (@Sendable () async -> [CastDevice])?) {
        transferCandidates = provider
    }

    /// The app stopped here: if the same app now plays the same media on another known device,
    /// the session moved there. Joins it and reports ``CastSessionEvent/didResume(transferred:)``.
    private func followTransfer(of app: ApplicationInfo) async -> Bool {
        guard let provider = transferCandidates, let contentID = remoteMediaClient.mediaStatus?.media?.contentId else { return false }
        let here = device
        let candidates = await provider().filter { $0.id != here.id }.prefix(16)
        guard !candidates.isEmpty else { return false }
        return await Self.$movingRequest.withValue(true) {
            await searchCandidates(Array(candidates), app: app, contentID: contentID, from: here)
        }
    }

    private func searchCandidates(_ candidates: [CastDevice], app: ApplicationInfo, contentID: String, from here: CastDevice) async -> Bool {
        transferring = true
        defer { transferring = false }
        log.info("app \(app.appId) stopped here; looking for it on \(candidates.count) other device(s)", stateFields())
        for candidate in candidates {
            guard let previous = try? await switchDevice(to: candidate, policy: .joinOnly) else { continue }
            if application?.appId == app.appId, remoteMediaClient.mediaStatus?.media?.contentId == contentID {
                await previous.connection?.close()
                log.info("session moved from \(here) to \(candidate): app \(app.appId) plays \(contentID) there", [
                    "from": .string(here.id), "to": .string(candidate.id),
                ])
                await apply(.transferred)
                return true
            }
            await restore(previous)
        }
        log.info("app \(app.appId) not found on another device", stateFields())
        return false
    }

    private func mediaStatusForTransfer() async throws(CastSessionError) -> MediaStatus? {
        let request = await remoteMediaClient.requestStatus()
        switch await request.result {
        case .success(let status): return status
        case .failure(let error): throw .requestFailed(step: "GET_STATUS (transfer)", error)
        }
    }

    // MARK: - State machine driver

    private func apply(_ input: SessionStateMachine.Input) async {
        let before = machine.state
        let outputs = machine.handle(input)
        if outputs.isEmpty, before == machine.state {
            log.debug("ignored \(input) in state \(before.name)", ["state": .string(before.name)])
            return
        }
        if before != machine.state {
            log.info("state \(before.name) → \(machine.state)", stateFields(["from": .string(before.name)]))
            stateWaiters.emit(machine.state)
        }
        for output in outputs {
            switch output {
            case .event(let event): emit(event)
            case .effect(let effect): await perform(effect)
            }
        }
    }

    private func stateFields(_ extra: LogFields = [:]) -> LogFields {
        var fields = extra
        fields["state"] = .string(machine.state.name)
        if let app = application { fields["session"] = .string(app.sessionId) }
        if case .ended(let error?) = machine.state { fields["endReason"] = .string(error.name) }
        if case .failed(let error) = machine.state { fields["endReason"] = .string(error.name) }
        return fields
    }

    private func emit(_ event: CastSessionEvent) {
        let level: LogLevel
        switch event {
        case .didFailToStart, .didSuspend: level = .warning
        case .didEnd(let error): level = error == nil ? .info : .warning
        default: level = .info
        }
        log.log(level, "\(event)", stateFields(["event": .string(event.name)]))
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
        if case .didEnd = event { remoteMediaClient.sessionEnded() }
    }

    private func perform(_ effect: SessionStateMachine.Effect) async {
        switch effect {
        case .connect(let resume):
            await runConnect(resume: resume)
        case .scheduleRetry(let delay, let attempt):
            retryTask?.cancel()
            log.info("reconnect attempt \(attempt) in \(Int(delay * 1000)) ms", stateFields([
                "attempt": .int(attempt), "delayMs": .int(Int(delay * 1000)),
            ]))
            retryTask = Task { [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                guard !Task.isCancelled else { return }
                await self?.apply(.retryDue)
            }
        case .cancelRetry:
            retryTask?.cancel()
            retryTask = nil
            bumpGeneration()
        case .failPendingRequests(let why):
            failPending(why)
        case .close(let stopApp):
            await closeConnection(stopApp: stopApp)
            if case .ending = machine.state { await apply(.endFinished) }
        case .saveResumeRecord:
            guard let resumeStore, let app = application else { return }
            let record = SessionResumeRecord(device: device, appID: app.appId, sessionID: app.sessionId, transportID: app.transportId)
            do { try resumeStore.save(record) } catch {
                log.warning("cannot save the resume record: \(error)", ["path": .string(resumeStore.path)])
            }
        case .deleteResumeRecord:
            guard let resumeStore, !keepResumeRecord else { return }
            do { try resumeStore.remove(deviceID: device.id) } catch {
                log.warning("cannot delete the resume record: \(error)", ["path": .string(resumeStore.path)])
            }
        }
    }

    // MARK: - Connecting

    private func runConnect(resume: Bool) async {
        let target: SessionResumeRecord?
        if resume {
            if let app = application {
                target = SessionResumeRecord(device: device, appID: app.appId, sessionID: app.sessionId, transportID: app.transportId)
            } else {
                target = resumeTarget
            }
        } else {
            target = nil
        }
        if resume, target == nil {
            await apply(.resumeFailed(.resumeRecordUnusable("no app session to resume"), retryable: false, jitter: 0))
            return
        }
        bumpGeneration()
        let attemptGeneration = generation
        do {
            let app = try await openAndJoin(resume: target, policy: options.joinPolicy)
            guard attemptGeneration == generation else {
                log.debug("connection attempt superseded; closing it")
                return
            }
            application = app
            await apply(resume ? .resumed : .started)
        } catch {
            guard attemptGeneration == generation else { return }
            await closeConnection(stopApp: false)
            if resume {
                await apply(.resumeFailed(error, retryable: Self.isRetryable(error), jitter: Double.random(in: 0..<1)))
            } else {
                await apply(.startFailed(error))
            }
        }
    }

    /// Whether retrying can help: transport failures and lost replies yes; a gone app session, or
    /// a device that failed required authentication (it could be an impostor), no.
    static func isRetryable(_ error: CastSessionError) -> Bool {
        switch error {
        case .connectFailed(.deviceAuthFailed): return false
        case .connectFailed: return true
        case .requestFailed(_, .disconnected), .requestFailed(_, .timedOut): return true
        default: return false
        }
    }

    /// TLS, CONNECT receiver-0, GET_STATUS, join (or LAUNCH), CONNECT to the app, media GET_STATUS.
    private func openAndJoin(resume target: SessionResumeRecord?, policy: CastOptions.JoinPolicy) async throws(CastSessionError) -> ApplicationInfo {
        let started = MonotonicClock.seconds()
        let attemptGeneration = generation
        let newConnection: CastConnection
        do {
            newConnection = try await CastConnection.connect(host: device.host, port: device.port, options: options.connectionOptions,
                                                             group: group)
        } catch {
            throw .connectFailed(error)
        }
        guard attemptGeneration == generation else {
            await newConnection.close()
            throw .cancelled
        }
        connection = newConnection
        deviceAuth = newConnection.deviceAuth
        startReading(newConnection, generation: attemptGeneration)
        try await sendConnect(to: .receiver0, on: newConnection)

        let status = try await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestId: $0) }
        var app: ApplicationInfo
        if let target {
            guard let running = status.applications.first(where: { $0.sessionId == target.sessionID }) else {
                throw .sessionGone(appID: target.appID, sessionID: target.sessionID)
            }
            app = running
        } else if policy != .alwaysLaunch, let running = status.application(withID: options.receiverAppID) {
            log.info("joining running app \(running.appId) session \(running.sessionId)", [
                "appId": .string(running.appId), "session": .string(running.sessionId),
            ])
            app = running
        } else if policy == .joinOnly {
            throw .appNotRunning(appID: options.receiverAppID)
        } else {
            app = try await launch()
        }
        try await sendConnect(to: app.transport, on: newConnection)
        application = app
        if app.namespaces.isEmpty || app.supports(.media) {
            let media = await remoteMediaClient.requestStatus()
            if case .failure(let error) = await media.result {
                log.warning("media GET_STATUS failed: \(error); going on", ["session": .string(app.sessionId)])
            }
        }
        log.info("\(target == nil ? "started" : "re-joined") app \(app.appId) session \(app.sessionId) in \(Int((MonotonicClock.seconds() - started) * 1000)) ms", [
            "appId": .string(app.appId), "session": .string(app.sessionId), "transportId": .string(app.transportId),
            "durationMs": .int(Int((MonotonicClock.seconds() - started) * 1000)),
        ])
        return app
    }

    /// LAUNCH, then wait until the app shows up in a RECEIVER_STATUS (the reply itself on the
    /// simulator and most devices; some devices answer before the app is up, so poll GET_STATUS).
    private func launch() async throws(CastSessionError) -> ApplicationInfo {
        let appID = options.receiverAppID
        log.info("launching app \(appID)", ["appId": .string(appID)])
        var status = try await receiverRequest(step: "LAUNCH", type: "LAUNCH") {
            .launch(LaunchRequest(requestId: $0, appId: appID))
        }
        let deadline = MonotonicClock.seconds() + options.requestTimeout
        while status.application(withID: appID) == nil {
            guard MonotonicClock.seconds() < deadline else {
                throw .requestFailed(step: "LAUNCH", .timedOut(after: options.requestTimeout))
            }
            try? await Task.sleep(for: .milliseconds(250))
            status = try await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestId: $0) }
        }
        return status.application(withID: appID)!
    }

    private func sendConnect(to endpoint: EndpointID, on connection: CastConnection) async throws(CastSessionError) {
        let connect = ConnectionMessage.connect(ConnectRequest(
            connType: .strong, origin: .object(JSONObject()), userAgent: options.userAgent,
            senderInfo: ["sdkType": 2, "version": "castline", "platform": 4, "connectionType": 1]))
        do {
            try await connection.send(CastMessage(source: options.senderID, destination: endpoint.rawValue, namespace: .connection,
                                                  json: connect.json))
        } catch {
            throw .requestFailed(step: "CONNECT", .disconnected("\(error)"))
        }
    }

    private func receiverRequest(step: String, type: String,
                                 _ build: @escaping @Sendable (RequestID) -> ReceiverMessage) async throws(CastSessionError) -> ReceiverStatus {
        let request: CastRequest<ReceiverStatus> = self.request(
            namespace: .receiver, destination: .receiver0, type: type, timeout: options.requestTimeout,
            build: { build($0).json },
            map: { payload in
                if case .receiver(.receiverStatus(_, let status)) = payload { return .success(status) }
                return .failure(.deviceError(nil, ErrorReason(rawValue: "unexpected reply \(payload.typeName ?? "?")")))
            })
        switch await request.result {
        case .success(let status): return status
        case .failure(let error): throw .requestFailed(step: step, error)
        }
    }

    private func startReading(_ connection: CastConnection, generation: Int) {
        Task { [weak self] in
            for await message in connection.messages {
                guard let self else { return }
                await self.handle(message, generation: generation)
            }
            let reason = await connection.closeReason
            await self?.connectionEnded(reason, generation: generation)
        }
    }

    private func closeConnection(stopApp: Bool) async {
        guard let current = connection else { return }
        if stopApp, let app = application {
            let stop: CastRequest<ReceiverStatus> = request(
                namespace: .receiver, destination: .receiver0, type: "STOP", timeout: min(options.requestTimeout, 5),
                build: { ReceiverMessage.stop(requestId: $0, sessionId: app.sessionId).json },
                map: { payload in
                    if case .receiver(.receiverStatus(_, let status)) = payload { return .success(status) }
                    return .failure(.deviceError(nil, nil))
                })
            if case .failure(let error) = await stop.result {
                log.warning("STOP of app \(app.appId) failed: \(error)", ["session": .string(app.sessionId)])
            } else {
                log.info("stopped app \(app.appId)", ["session": .string(app.sessionId)])
            }
        } else if let app = application, current.isActive {
            let close = ConnectionMessage.close(reasonCode: nil).json
            try? await current.send(CastMessage(source: options.senderID, destination: app.transportId, namespace: .connection, json: close))
        }
        if current.isActive {
            let close = ConnectionMessage.close(reasonCode: nil).json
            try? await current.send(CastMessage(source: options.senderID, destination: EndpointID.receiver0.rawValue,
                                                namespace: .connection, json: close))
        }
        bumpGeneration()
        connection = nil
        await current.close()
        failPending("the connection was closed")
    }

    private func connectionEnded(_ reason: CastConnectionCloseReason, generation ended: Int) async {
        guard ended == generation else { return }
        connection = nil
        failPending("\(reason)")
        switch machine.state {
        case .connected:
            await apply(.connectionLost(.connectionLost(reason), jitter: Double.random(in: 0..<1)))
        default:
            log.debug("connection ended in state \(machine.state.name): \(reason)", stateFields())
        }
    }

    // MARK: - Inbound

    private func handle(_ message: CastMessage, generation current: Int) async {
        guard current == generation else { return }
        let namespace = message.namespace
        if namespace != .connection, namespace != .receiver, namespace != .media {
            deliverToChannel(message)
            return
        }
        guard let text = message.payload.text else {
            log.warning("binary payload on \(namespace.rawValue) ignored", ["namespace": .string(namespace.rawValue)])
            return
        }
        let payload: CastPayload
        do {
            payload = try CastPayload.decode(namespace: namespace, utf8: text)
        } catch {
            log.warning("undecodable payload from \(message.sourceID) ignored: \(error)", [
                "namespace": .string(namespace.rawValue), "source": .string(message.sourceID),
            ])
            return
        }
        if let completion = tracker.reply(payload, on: namespace) { finish(completion) }
        switch payload {
        case .connection(.close):
            await handleClose(from: message.sourceID)
        case .receiver(.receiverStatus(_, let status)):
            await handleReceiverStatus(status)
        case .media(.mediaStatus(_, let statuses)):
            if message.sourceID == application?.transportId || application == nil {
                remoteMediaClient.apply(statuses)
            }
        default:
            break
        }
    }

    private func handleClose(from source: String) async {
        if source == EndpointID.receiver0.rawValue {
            log.warning("the device closed our platform connection", stateFields())
            await connection?.close()
            return
        }
        guard let app = application, source == app.transportId, case .connected = machine.state else { return }
        // Find out why: the RECEIVER_STATUS that follows (or answers GET_STATUS) says whether the
        // app is gone. Asked from a new task: this one must go on reading messages.
        log.info("app \(app.appId) closed our connection; checking whether it still runs", stateFields())
        Task { await self.checkApp(afterCloseOf: app) }
    }

    private func checkApp(afterCloseOf app: ApplicationInfo) async {
        guard !transferring else { return }
        let status = try? await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestId: $0) }
        guard case .connected = machine.state, !transferring, application?.sessionId == app.sessionId else { return }
        if let status, !status.applications.contains(where: { $0.sessionId == app.sessionId }) {
            await handleReceiverStatus(status)
        } else {
            await apply(.appGone(.appClosedConnection(appID: app.appId)))
        }
    }

    private func handleReceiverStatus(_ status: ReceiverStatus) async {
        let deviceStatus = CastDeviceStatus(status)
        if deviceStatus != self.deviceStatus {
            self.deviceStatus = deviceStatus
            let apps = deviceStatus.applications.map(\.appId).joined(separator: ",")
            log.debug("device status: volume \(deviceStatus.volumeLevel.map { "\($0)" } ?? "?"), muted \(deviceStatus.isMuted.map { "\($0)" } ?? "?"), standby \(deviceStatus.isStandBy.map { "\($0)" } ?? "?"), apps [\(apps)]", stateFields(["apps": .string(apps)]))
            fanout.emit(.deviceStatus(deviceStatus))
            for listener in listeners.current { listener.session(self, didReceiveDeviceStatus: deviceStatus) }
        }
        guard case .connected = machine.state, !transferring, let app = application else { return }
        guard !status.applications.contains(where: { $0.sessionId == app.sessionId }) else { return }
        if let other = status.activeApplication, other.appId != app.appId || other.sessionId != app.sessionId {
            await apply(.appGone(.appReplaced(appID: app.appId, by: other.appId)))
        } else if await followTransfer(of: app) {
            return
        } else if case .connected = machine.state {
            await apply(.appGone(.appStopped(appID: app.appId)))
        }
    }

    // MARK: - Requests

    /// Sends a request and tracks its reply. Fails at once when there is no connection.
    func request<Value: Sendable>(namespace: CastNamespace, destination: EndpointID, type: String, timeout: Double?,
                                  supersedes: Bool = false, build: @Sendable (RequestID) -> JSONValue,
                                  map: @escaping @Sendable (CastPayload) -> Result<Value, CastRequestError>) -> CastRequest<Value> {
        guard let connection, connection.isActive else {
            return .failed(type: type, .disconnected("not connected (session \(machine.state.name))"))
        }
        if transferring, !Self.movingRequest {
            return .failed(type: type, .disconnected("the session is moving to another device"))
        }
        let seconds = timeout ?? options.requestTimeout
        let box = RequestBox<Value>()
        let (id, superseded) = tracker.begin(namespace: namespace, type: type, timeout: seconds, now: MonotonicClock.seconds(),
                                              waiter: RequestSink { result in box.complete(result.flatMap(map)) }, supersedes: supersedes)
        let request = CastRequest<Value>(id: id, type: type, timeout: seconds) { [weak self] id in
            Task { await self?.forget(id) }
        }
        box.request = request
        for completion in superseded { finish(completion) }
        let json = build(id)
        let message = CastMessage(source: options.senderID, destination: destination.rawValue, namespace: namespace, json: json)
        log.debug("→ \(type) request \(id.rawValue)", ["requestId": .int(id.rawValue), "type": .string(type),
                                                        "namespace": .string(namespace.rawValue)])
        // Queued now, in call order (a LOAD then a PLAY reach the device in that order).
        connection.enqueue(message) { [weak self] error in
            guard let error, let self else { return }
            Task { await self.failRequest(id, .disconnected("\(error)")) }
        }
        if seconds.isFinite {
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(min(max(seconds, 0), 86_400 * 365)))
                await self?.expireRequests()
            }
        }
        return request
    }

    /// Sends a message that expects no reply.
    func send(namespace: CastNamespace, destination: EndpointID, payload: CastMessage.Payload) async throws(CastRequestError) {
        guard let connection, connection.isActive else {
            throw .disconnected("not connected (session \(machine.state.name))")
        }
        if transferring { throw .disconnected("the session is moving to another device") }
        do {
            try await connection.send(CastMessage(sourceID: options.senderID, destinationID: destination.rawValue,
                                                  namespace: namespace, payload: payload))
        } catch {
            throw .disconnected("\(error)")
        }
    }

    private func finish(_ completion: RequestTracker<RequestSink>.Completion) {
        let request = completion.request
        let latency = Int((MonotonicClock.seconds() - request.sentAt) * 1000)
        var fields: LogFields = ["requestId": .int(request.id.rawValue), "type": .string(request.type),
                                 "namespace": .string(request.namespace.rawValue), "latencyMs": .int(latency)]
        if let app = application { fields["session"] = .string(app.sessionId) }
        switch completion.result {
        case .success:
            log.debug("← \(request.type) request \(request.id.rawValue) answered in \(latency) ms", fields)
        case .failure(let error):
            fields["error"] = .string("\(error)")
            log.warning("\(request.type) request \(request.id.rawValue) failed: \(error)", fields)
        }
        completion.request.waiter.complete(completion.result)
    }

    private func failRequest(_ id: RequestID, _ error: CastRequestError) {
        guard let completion = tracker.fail(id, with: error) else { return }
        finish(completion)
    }

    private func forget(_ id: RequestID) {
        _ = tracker.cancel(id)
    }

    private func expireRequests() {
        for completion in tracker.expire(now: MonotonicClock.seconds()) { finish(completion) }
    }

    private func failPending(_ why: String) {
        for completion in tracker.disconnect(why) { finish(completion) }
    }

    // MARK: - Custom channels

    /// Registers `channel` on this session (replacing one on the same namespace).
    public func add(_ channel: GenericChannel) {
        channels[channel.namespace] = channel
        channel.attach(self)
        log.info("channel \(channel.namespace.rawValue) added", ["namespace": .string(channel.namespace.rawValue)])
    }

    public func remove(_ channel: GenericChannel) {
        guard channels[channel.namespace] === channel else { return }
        channels[channel.namespace] = nil
    }

    private func deliverToChannel(_ message: CastMessage) {
        guard let channel = channels[message.namespace] else {
            log.debug("message on unregistered namespace \(message.namespace.rawValue) ignored",
                      ["namespace": .string(message.namespace.rawValue)])
            return
        }
        if case .string(let text) = message.payload, let json = try? JSONValue.parse(text) {
            let payload = CastPayload.custom(json)
            if let completion = tracker.reply(payload, on: message.namespace) { finish(completion) }
        }
        channel.deliver(message)
    }

    /// The app's transportId, for channels and the media client.
    var appTransport: EndpointID? { application?.transport }

    // MARK: - Device volume

    /// Sets the device volume (0…1).
    public func setDeviceVolume(_ level: Double) -> CastRequest<CastDeviceStatus> {
        deviceVolumeRequest(Volume(level: min(max(level.isNaN ? 0 : level, 0), 1)))
    }

    /// Mutes or unmutes the device.
    public func setDeviceMuted(_ muted: Bool) -> CastRequest<CastDeviceStatus> {
        deviceVolumeRequest(Volume(muted: muted))
    }

    private func deviceVolumeRequest(_ volume: Volume) -> CastRequest<CastDeviceStatus> {
        request(namespace: .receiver, destination: .receiver0, type: "SET_VOLUME", timeout: nil,
                build: { ReceiverMessage.setVolume(requestId: $0, volume: volume).json },
                map: { payload in
                    if case .receiver(.receiverStatus(_, let status)) = payload { return .success(CastDeviceStatus(status)) }
                    return .failure(.deviceError(nil, nil))
                })
    }
}

/// Holds the typed request for the tracker's callback (set right after the id is known).
final class RequestBox<Value: Sendable>: @unchecked Sendable {
    // Written once on the session's executor before any reply can be handled there.
    var request: CastRequest<Value>?

    func complete(_ result: Result<Value, CastRequestError>) {
        request?.complete(result)
    }
}
