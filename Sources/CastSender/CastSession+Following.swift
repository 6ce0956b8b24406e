import CastCore
import CastLogging
import CastProtocol

/// A session with ``CastOptions/JoinPolicy/follow``: on the device rather than on one app. It
/// joins whatever app runs, lets it go when it stops or another replaces it, and changes the app
/// when asked (``launch(appID:)``, ``stopApplication()``); it ends only when asked to or when
/// reconnecting gives up.
extension CastSession {
    /// The app a following session joins: the first that is not the idle screen.
    static func followed(in status: ReceiverStatus) -> ApplicationInfo? { followed(among: status.applications) }

    /// The app a following session joins among `applications` (what a channel plugin hears of).
    package static func followed(among applications: [ApplicationInfo]) -> ApplicationInfo? {
        applications.first { $0.isIdleScreen != true }
    }

    var isFollowing: Bool { options.joinPolicy == .follow }

    /// A RECEIVER_STATUS, to a following session: join the app that runs now, or let go of the
    /// one that stopped. Runs on the message reader, so it sends and never awaits a reply (the
    /// replies come through this same reader).
    func follow(_ status: ReceiverStatus) {
        guard case .connected = machine.state, let connection else { return }
        let running = Self.followed(in: status)
        if running?.sessionID == application?.sessionID { return }
        if let old = application {
            let how = running.map { "replaced by \($0.appID)" } ?? "stopped"
            log.info("app \(old.appID) \(how)", stateFields(["appId": .string(old.appID), "change": .string(running == nil ? "stopped" : "replaced")]))
            application = nil
            remoteMediaClient.apply([])
            // A LOAD (or any request) the old app had not answered never will: fail it now
            // rather than at its timeout.
            connection.failPendingRequests(to: old.transportID, "app \(old.appID) \(how) before it answered")
        }
        guard let running else { return }
        log.info("following app \(running.appID) session \(running.sessionID)", [
            "appId": .string(running.appID), "session": .string(running.sessionID),
        ])
        application = running
        let mediaStatusFollows = running.namespaces.isEmpty || running.supports(.media)
        let connect = ConnectionMessage.connect(connectRequest).json
        connection.enqueue(CastMessage(source: options.senderID, destination: running.transportID, namespace: .connection, json: connect),
                           flush: !mediaStatusFollows)
        if mediaStatusFollows {
            _ = appRequest(namespace: .media, type: "GET_STATUS", timeout: nil,
                           build: { id, _ in MediaMessage.getStatus(requestID: id, mediaSessionID: nil).json },
                           map: RemoteMediaClient.mediaStatusReply)
        }
    }

    /// Launches `appID` on the device (unless it runs already) and returns it once the session
    /// has joined it. Only for a following session. `timeout`: how long the LAUNCH may take to
    /// be answered, and the app to show up after (nil: ``CastOptions/requestTimeout``); a launch
    /// that hangs past it fails `timedOut`. `evenIfRunning`: LAUNCH an app that runs already (it
    /// comes to the front: a cover lifts, and over HDMI-CEC the TV wakes and takes its input).
    public func launch(appID: String, timeout: Double? = nil, evenIfRunning: Bool = false) async throws(CastSessionError) -> ApplicationInfo {
        guard isFollowing else { throw .requestFailed(step: "LAUNCH", .invalidRequest(ErrorReason(rawValue: "not a following session"))) }
        if !evenIfRunning, let app = application, app.appID == appID { return app }
        log.info("launching app \(appID)", ["appId": .string(appID)])
        // The reply's RECEIVER_STATUS is followed (the app joined) before the request completes.
        let bound = timeout ?? options.requestTimeout
        let status = try await receiverRequest(step: "LAUNCH", type: "LAUNCH", timeout: bound) { .launch(LaunchRequest(requestID: $0, appID: appID)) }
        if let app = application, app.appID == appID { return app }
        // Some devices answer before the app is up: ask again until it shows (bounded).
        let deadline = MonotonicClock.seconds() + bound
        var latest = status
        while MonotonicClock.seconds() < deadline {
            if let app = application, app.appID == appID { return app }
            try? await Task.sleep(for: .milliseconds(250))
            latest = try await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestID: $0) }
        }
        if let app = application, app.appID == appID { return app }
        throw .appNotRunning(appID: appID + (latest.activeApplication.map { " (\($0.appID) runs)" } ?? ""))
    }

    /// Stops the app the session follows (receiver STOP); the session stays on the device.
    public func stopApplication() async throws(CastSessionError) {
        guard let app = application else { return }
        // castline's own stop, told apart from one on the device (`logs stats`).
        log.info("stopping app \(app.appID)", stateFields(["appId": .string(app.appID), "change": "stopping"]))
        _ = try await receiverRequest(step: "STOP", type: "STOP") { .stop(requestID: $0, sessionID: app.sessionID) }
    }
}
