import CastCore
import CastLogging
import CastProtocol

/// Control and fault injection (the server's control socket), snapshots and stream transfer.
extension ReceiverDevice {
    // MARK: Sync (issue 45)

    /// From now on the playhead moves `delay` after it is set moving (the first frame).
    public mutating func setFirstFrame(_ delay: JitteredDelay) {
        player.firstFrame = delay
        log.info("first frame after \(delay.base) s + up to \(delay.jitter) s", ["base": .double(delay.base), "jitter": .double(delay.jitter)])
    }

    /// From `now` on the device clock is off by `ppm` (clamped to ±``DeviceProfile/maximumClockDriftPPM``).
    public mutating func setClockDrift(ppm: Double, now: Double) -> [DeviceOutput] {
        let out = advance(to: now)
        let bound = DeviceProfile.maximumClockDriftPPM
        let clamped = ppm.isFinite ? min(bound, max(-bound, ppm)) : 0
        player.setClockDrift(ppm: clamped, now: now)
        log.info("clock drift \(clamped) ppm", ["ppm": .double(clamped)])
        return out
    }

    /// The first-frame delay and clock drift in force (for `list`).
    public var playbackSync: (firstFrame: JitteredDelay, clockDriftPPM: Double, playbackRates: ClosedRange<Double>) {
        (player.firstFrame, player.clockDriftPPM, player.playbackRates)
    }

    /// Takes the ground-truth changes since the last call, oldest first (the server writes them
    /// to the frame log as `playback` events).
    public mutating func takePlaybackEvents() -> [PlaybackEvent] {
        guard !player.playbackEvents.isEmpty else { return [] }
        defer { player.playbackEvents.removeAll() }
        return player.playbackEvents
    }

    /// The next LOAD or QUEUE_LOAD fails: LOAD_FAILED with `code` (once).
    public mutating func failNextLoad(_ code: DetailedErrorCode) {
        player.pendingLoadFailure = code
        log.info("next LOAD fails with \(code)", ["detailedErrorCode": .int(code.rawValue)])
    }

    /// Stops the running app as if another sender sent STOP: CLOSE to its senders, RECEIVER_STATUS
    /// (requestId 0) to every sender on receiver-0, advertisement.
    public mutating func stopRunningApp(now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard running != nil else { return out }
        out += terminateApp(reason: "stopped by control")
        out += deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
        out += announceIfChanged()
        return out
    }

    /// Sends `payload` on `namespace` to every sender connected to the running app's transportId
    /// when the app handles the namespace (media included) or the namespace is not a
    /// `com.google.cast.*` one; otherwise (platform namespaces, or no app) from receiver-0 to the
    /// senders connected there.
    public mutating func push(namespace: CastNamespace, payload: JSONValue, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        let isPlatform = namespace.rawValue.hasPrefix("urn:x-cast:com.google.cast.")
        var endpoint = Self.platformEndpoint
        if let app = running, !isPlatform || app.definition.announcedNamespaces.contains(namespace) {
            endpoint = app.transportID
        }
        let targets = virtualConnections.connections(to: endpoint)
        log.info("push on \(namespace) from \(endpoint) to \(targets.count) sender(s)", [
            "namespace": .string(namespace.rawValue), "source": .string(endpoint), "senders": .int(targets.count),
        ])
        out += deliver([EndpointReply(namespace, payload, to: .everyone)], from: endpoint, requester: nil)
        return out
    }

    /// Power cycle: every TCP connection is closed, the app and media are gone; volume, id
    /// counters and a pending load failure stay.
    public mutating func reboot(now: Double) -> [DeviceOutput] {
        var out: [DeviceOutput] = connections.sorted().map { .closeConnection($0, reason: "reboot") }
        if let app = running { log.info("reboot stops app \(app.definition.appID)", ["appId": .string(app.definition.appID)]) }
        connections.removeAll()
        virtualConnections.removeAll()
        running = nil
        pendingLaunch = nil
        player.lastNow = now
        player.reset()
        // The TV's power and input are the TV's own; a cover goes with the app.
        screen.coveredBy = nil
        screen.lastWake = now
        log.info("rebooted")
        out += announceIfChanged()
        return out
    }

    /// The running app and its media at `now`; nil when no app runs.
    public func exportSession(now: Double) -> TransferredSession? {
        var copy = self
        _ = copy.advance(to: now)
        guard let app = copy.running else { return nil }
        var session = TransferredSession(app: app.definition, media: copy.player.export(now: now))
        session.sessionID = app.sessionID
        return session
    }

    /// Launches the session's app here (this catalogue's definition when it has the id) and
    /// resumes its media at the exported currentTime: BUFFERING, then the exported state.
    /// RECEIVER_STATUS (requestId 0) goes to the senders on receiver-0.
    /// `keepSessionID`: the app keeps its sessionId (a group's endpoint moving to a new leader),
    /// so its senders re-join the same session.
    public mutating func importSession(_ session: TransferredSession, keepSessionID: Bool = false, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        let definition = catalogue.first { $0.appID == session.app.appID } ?? session.app
        out += terminateApp(reason: "replaced by a transferred session")
        out += start(definition, now: now, sessionID: keepSessionID ? session.sessionID : nil)
        if let media = session.media, definition.isMediaPlayer { player.restore(media, now: now) }
        log.info("imported session of \(definition.appID)", ["appId": .string(definition.appID)])
        out += deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
        out += announceIfChanged()
        return out
    }

    /// What the device is doing at `now`.
    public func snapshot(now: Double) -> DeviceSnapshot {
        var copy = self
        _ = copy.advance(to: now)
        return copy.makeSnapshot(now: now)
    }

    private func makeSnapshot(now: Double) -> DeviceSnapshot {
        let app = running.map {
            DeviceSnapshot.App(appID: $0.definition.appID, displayName: $0.definition.displayName, sessionID: $0.sessionID,
                               transportID: $0.transportID, isIdleScreen: $0.definition.isIdleScreen,
                               page: $0.definition.showsWebPages ? $0.page.json : nil)
        }
        let senders = virtualConnections.all.map {
            DeviceSnapshot.Sender(connection: $0.connection, senderID: $0.senderID, endpoint: $0.endpoint,
                                  connType: $0.connType, userAgent: $0.userAgent)
        }
        let media = player.session.map { session in
            DeviceSnapshot.Media(
                mediaSessionID: session.mediaSessionID, playerState: session.playerState, currentTime: session.currentTime(at: now),
                playbackRate: session.playbackRate, contentID: session.currentMedia.contentID,
                contentType: session.currentMedia.contentType, title: session.currentMedia.metadata?.title,
                currentItemID: session.currentItem.itemID, itemCount: session.items.count, repeatMode: session.repeatMode,
                activeTrackIDs: session.activeTrackIDs
            )
        }
        var snapshot = DeviceSnapshot(
            uuid: profile.uuid, friendlyName: profile.friendlyName, app: app, connections: connections.sorted(), senders: senders,
            media: media, volume: volume, advertisement: advertisement, ignoredMessages: ignoredMessages,
            rejectedMessages: rejectedMessages, pendingLoadFailure: player.pendingLoadFailure,
            multizone: [
                "group": group?.statusJSON ?? .null, "groups": .array(memberships.groups.map(\.json)),
                "castingGroups": .array(memberships.castingGroups.map(\.json)),
            ]
        )
        snapshot.screen = screenState
        snapshot.playback = player.session.map { $0.truth(at: now) }
        snapshot.field = [
            "profile": .string(profile.field.name), "appIdleTimeout": appIdleTimeout.map { .double($0) } ?? .null,
            "idleResetBy": .string(idleResetBy.rawValue), "launchesToHang": .int(Int64(launchesToHang)),
            "launchPending": pendingLaunch.map { .string($0.outcome.rawValue) } ?? .null,
        ]
        return snapshot
    }
}
