import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Connecting, joining or launching the app, closing, and what happens when a connection ends.
extension CastSession {
    // MARK: - Connecting

    func runConnect(resume: Bool) async {
        let target: SessionResumeRecord?
        if resume {
            if let app = application {
                target = SessionResumeRecord(device: device, appID: app.appID, sessionID: app.sessionID, transportID: app.transportID)
            } else {
                target = resumeTarget
            }
        } else {
            target = nil
        }
        if resume { await refreshGroupEndpoint() }
        if resume, target == nil, options.joinPolicy != .follow {
            await apply(.resumeFailed(.resumeRecordUnusable("no app session to resume"), retryable: false, jitter: 0))
            return
        }
        bumpGeneration()
        let attemptGeneration = generation
        do throws(CastSessionError) {
            let app = try await openAndJoin(resume: target, policy: options.joinPolicy)
            guard attemptGeneration == generation else {
                log.debug("connection attempt superseded; closing it")
                return
            }
            // The connection may have dropped during the last step (whose failure is not fatal):
            // a session must never be `connected` without a live connection.
            guard connection?.isActive == true else {
                throw .requestFailed(step: "media GET_STATUS", .disconnected("the connection ended while joining"))
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
        case .connectFailed: return true   // includes deviceAuthUnanswered: a timeout or EOF, not a bad chain
        case .requestFailed(_, .disconnected), .requestFailed(_, .timedOut): return true
        default: return false
        }
    }

    /// TLS, CONNECT receiver-0, GET_STATUS, join (or LAUNCH), CONNECT to the app, media GET_STATUS.
    /// Nil only with ``CastOptions/JoinPolicy/follow`` when no app runs.
    func openAndJoin(resume target: SessionResumeRecord?, policy: CastOptions.JoinPolicy) async throws(CastSessionError) -> ApplicationInfo? {
        let started = MonotonicClock.seconds()
        let attemptGeneration = generation
        let attempt = beginOpenAttempt()
        defer { finishOpenAttempt(attempt) }
        let newConnection: CastConnection
        do {
            var connectionOptions = options.connectionOptions
            connectionOptions.logFields = Self.logFields(device: device, localID: localID)
            connectionOptions.requestObserver = requestCounts.observer(then: connectionOptions.requestObserver)
            // A reconnect's first failure is a warning; the next ones are in the state lines.
            if case .resuming(let n) = machine.state, n > 1 { connectionOptions.connectFailureLevel = .info }
            newConnection = try await CastConnection.connect(host: device.host, port: device.port, options: connectionOptions,
                                                             group: loop, attempt: attempt)
        } catch .cancelled {
            throw .cancelled   // given up by end(): not a connect failure, nothing to retry
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
        try await sendConnect(to: .receiver0, on: newConnection, requestFollows: true)

        // Asked first: the device answers in order, so the multizone state is in before GET_STATUS's
        // reply completes the step (a one-shot `status` then shows it).
        await subscribeToMultizone()
        let status = try await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestID: $0) }
        var app: ApplicationInfo
        if policy == .follow {
            guard let running = Self.followed(in: status) else {
                log.info("connected; no app runs (following the device)", ["durationMs": .int(Int((MonotonicClock.seconds() - started) * 1000))])
                return nil
            }
            app = running
        } else if let target {
            guard let running = status.applications.first(where: { $0.sessionID == target.sessionID }) else {
                throw .sessionGone(appID: target.appID, sessionID: target.sessionID)
            }
            app = running
        } else if policy == .joinAnyMediaApp {
            guard let running = status.applications.first(where: { $0.isIdleScreen != true && $0.supports(.media) }) else {
                throw .appNotRunning(appID: "any media app")
            }
            log.info("joining running media app \(running.appID) session \(running.sessionID)", [
                "appId": .string(running.appID), "session": .string(running.sessionID),
            ])
            app = running
        } else if policy != .alwaysLaunch, let running = status.application(withID: options.receiverAppID) {
            log.info("joining running app \(running.appID) session \(running.sessionID)", [
                "appId": .string(running.appID), "session": .string(running.sessionID),
            ])
            app = running
        } else if policy == .joinOnly {
            throw .appNotRunning(appID: options.receiverAppID)
        } else {
            app = try await launch()
        }
        let mediaStatusFollows = app.namespaces.isEmpty || app.supports(.media)
        try await sendConnect(to: app.transport, on: newConnection, requestFollows: mediaStatusFollows)
        application = app
        if mediaStatusFollows {
            let media = await remoteMediaClient.requestStatus()
            if case .failure(let error) = await media.result {
                log.warning("media GET_STATUS failed: \(error); going on", ["session": .string(app.sessionID)])
            }
        }
        log.info("\(target == nil ? "started" : "re-joined") app \(app.appID) session \(app.sessionID) in \(Int((MonotonicClock.seconds() - started) * 1000)) ms", [
            "appId": .string(app.appID), "session": .string(app.sessionID), "transportId": .string(app.transportID),
            "durationMs": .int(Int((MonotonicClock.seconds() - started) * 1000)),
        ])
        return app
    }

    /// LAUNCH, then wait until the app shows up in a RECEIVER_STATUS (the reply itself on the
    /// simulator and most devices; some devices answer before the app is up, so poll GET_STATUS).
    func launch() async throws(CastSessionError) -> ApplicationInfo {
        let appID = options.receiverAppID
        log.info("launching app \(appID)", ["appId": .string(appID)])
        var status = try await receiverRequest(step: "LAUNCH", type: "LAUNCH") {
            .launch(LaunchRequest(requestID: $0, appID: appID))
        }
        let deadline = MonotonicClock.seconds() + options.requestTimeout
        while status.application(withID: appID) == nil {
            guard MonotonicClock.seconds() < deadline else {
                throw .requestFailed(step: "LAUNCH", .timedOut(after: options.requestTimeout))
            }
            try? await Task.sleep(for: .milliseconds(250))
            status = try await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestID: $0) }
        }
        return status.application(withID: appID)!
    }

    /// CONNECT to `endpoint`. `requestFollows`: a request goes out right after it, so the CONNECT
    /// waits for that request's flush (one TLS write for both; a write failure then fails that
    /// request as `disconnected`); otherwise it is sent and awaited on its own.
    func sendConnect(to endpoint: EndpointID, on connection: CastConnection, requestFollows: Bool) async throws(CastSessionError) {
        let connect = ConnectionMessage.connect(connectRequest)
        let message = CastMessage(source: options.senderID, destination: endpoint.rawValue, namespace: .connection, json: connect.json)
        if requestFollows {
            connection.enqueue(message, flush: false)
            return
        }
        do {
            try await connection.send(message)
        } catch {
            throw .requestFailed(step: "CONNECT", .disconnected("\(error)"))
        }
    }

    /// The CONNECT a session sends to the platform and to apps.
    var connectRequest: ConnectRequest {
        ConnectRequest(connType: .strong, origin: .object(JSONObject()), userAgent: options.userAgent,
                       senderInfo: ["sdkType": 2, "version": "castline", "platform": 4, "connectionType": 1])
    }

    func receiverRequest(step: String, type: String, timeout: Double? = nil,
                         _ build: @escaping @Sendable (RequestID) -> ReceiverMessage) async throws(CastSessionError) -> ReceiverStatus {
        switch await receiverStatusRequest(type: type, timeout: timeout, build).result {
        case .success(let status): return status
        case .failure(let error): throw .requestFailed(step: step, error)
        }
    }

    /// Reads the connection's messages until it ends. The task prefers the session's loop, the
    /// one the connection delivers on: a message is handled on the thread that read it, and a
    /// request of the session's own (the start's steps) resumes there too. It ends on that loop
    /// once the connection has ended; what follows the end runs in a task on the global executor,
    /// since the loop may be shutting down by then (a job handed to a loop that has shut down is
    /// dropped, never run).
    func startReading(_ connection: CastConnection, generation: Int) {
        Task(executorPreference: loopExecutor) { [weak self] in
            for await inbound in connection.messages {
                guard let self else {
                    inbound.completeReply()
                    return
                }
                await self.handle(inbound, generation: generation)
            }
            Task(executorPreference: globalConcurrentExecutor) { [weak self] in
                let reason = await connection.closeReason
                await self?.connectionEnded(reason, generation: generation)
            }
        }
    }

    func closeConnection(stopApp: Bool) async {
        guard let current = connection else { return }
        if stopApp, let app = application {
            let stop = receiverStatusRequest(type: "STOP", timeout: min(options.requestTimeout, 5)) {
                .stop(requestID: $0, sessionID: app.sessionID)
            }
            if case .failure(let error) = await stop.result {
                log.warning("STOP of app \(app.appID) failed: \(error)", ["session": .string(app.sessionID)])
            } else {
                log.info("stopped app \(app.appID)", ["session": .string(app.sessionID)])
            }
        } else if let app = application, current.isActive {
            let close = ConnectionMessage.close(reasonCode: nil).json
            try? await current.send(CastMessage(source: options.senderID, destination: app.transportID, namespace: .connection, json: close))
        }
        if current.isActive {
            let close = ConnectionMessage.close(reasonCode: nil).json
            try? await current.send(CastMessage(source: options.senderID, destination: EndpointID.receiver0.rawValue,
                                                namespace: .connection, json: close))
        }
        bumpGeneration()
        connection = nil
        await current.close()
    }

    /// The connection of `ended` is gone (its requests failed with it); for the current one the
    /// session suspends. An older connection's end changes nothing.
    func connectionEnded(_ reason: CastConnectionCloseReason, generation ended: Int) async {
        guard ended == generation else { return }
        connection = nil
        switch machine.state {
        case .connected:
            if let moved = await groupEndpointMoved() {
                await apply(.connectionLost(moved, jitter: Double.random(in: 0..<1)))
                return
            }
            await apply(.connectionLost(.connectionLost(reason), jitter: Double.random(in: 0..<1)))
        default:
            log.debug("connection ended in state \(machine.state.name): \(reason)", stateFields())
        }
    }
}
