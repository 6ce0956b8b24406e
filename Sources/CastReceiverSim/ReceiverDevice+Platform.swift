import CastCore
import CastLogging
import CastProtocol

/// The platform receiver (`urn:x-cast:com.google.cast.receiver` on `receiver-0`) and the app
/// lifecycle.
extension ReceiverDevice {
    static let stepInterval = Double(Float(0.05))

    /// Handles one receiver request; app CLOSEs it causes go to `effects` (sent before the replies).
    mutating func handleReceiver(
        _ payload: CastMessage.Payload, requester: Requester, now: Double, effects: inout [DeviceOutput]
    ) -> [EndpointReply] {
        let json: JSONValue
        let requestID: RequestID
        switch RequestEnvelope(payload) {
        case .invalid(let id, let why):
            return invalidCommand(id, why)
        case .valid(let value, let id):
            json = value
            requestID = id
        }
        let message: ReceiverMessage
        do {
            message = try ReceiverMessage(json: json)
        } catch {
            if json["type"]?.string == "LAUNCH" {
                log.warning("LAUNCH rejected: \(error)", ["type": "LAUNCH", "reason": "BAD_PARAMETER"])
                return [platformReply(ReceiverMessage.launchError(requestID: requestID, reason: .badParameter).json)]
            }
            return invalidCommand(requestID, "\(error)")
        }
        log.debug("receiver request \(message.typeName)", ["type": .string(message.typeName), "requestId": .int(requestID.rawValue)])
        switch message {
        case .getStatus:
            return [platformReply(receiverStatusMessage(requestID: requestID))]
        case .launch(let request):
            return launch(request.appID, requestID: requestID, requester: requester, now: now, effects: &effects)
        case .stop(_, let sessionID):
            return stop(sessionID: sessionID, requestID: requestID, effects: &effects)
        case .setVolume(_, let requested):
            var updated = volume
            if let level = requested.level { updated.level = Self.deviceLevel(level) }
            if let muted = requested.muted { updated.muted = muted }
            guard updated != volume else { return [platformReply(receiverStatusMessage(requestID: requestID))] }
            volume = updated
            log.info("device volume \(updated.level ?? 0)\(updated.muted == true ? " (muted)" : "")", [
                "level": .double(updated.level ?? 0), "muted": .bool(updated.muted ?? false),
            ])
            return receiverStatusToAll(requestID: requestID)
        case .getAppAvailability(_, let appIDs):
            let entries = appIDs.map { appID in
                AppAvailabilityEntry(appID: appID, availability: catalogue.contains { $0.appID == appID } ? .available : .unavailable)
            }
            return [platformReply(ReceiverMessage.appAvailability(requestID: requestID, availability: entries).json)]
        case .receiverStatus, .launchError, .invalidRequest, .appAvailability, .unknown:
            return invalidCommand(requestID, "unknown receiver command \(message.typeName)")
        }
    }

    func invalidCommand(_ requestID: RequestID, _ why: String) -> [EndpointReply] {
        log.warning("rejected receiver request: \(why)", ["reason": "INVALID_COMMAND", "requestId": .int(requestID.rawValue)])
        return [platformReply(ReceiverMessage.invalidRequest(requestID: requestID, reason: .invalidCommand).json)]
    }

    func platformReply(_ json: JSONValue) -> EndpointReply {
        EndpointReply(.receiver, json, to: .requester)
    }

    // MARK: Status

    var receiverStatus: ReceiverStatus {
        var status = ReceiverStatus(volume: Volume(level: volume.level, muted: volume.muted, controlType: .attenuation,
                                                   stepInterval: Self.stepInterval))
        if let app = running {
            let definition = app.definition
            status.applications = [ApplicationInfo(
                appID: definition.appID, appType: "WEB", displayName: definition.displayName, iconURL: definition.iconURL,
                isIdleScreen: definition.isIdleScreen, launchedFromCloud: false, namespaces: definition.announcedNamespaces,
                senderConnected: !virtualConnections.connections(to: app.transportID).isEmpty, sessionID: app.sessionID,
                statusText: definition.displayName, transportID: app.transportID, universalAppID: definition.appID
            )]
        }
        // HDMI-CEC's view, where the model reports it: the TV shows this input while a cast
        // runs and the TV is on and on it.
        if profile.isVideoDevice && profile.field.reportsCEC {
            status.isActiveInput = (running.map { !$0.definition.isIdleScreen } ?? false) && !screen.standby && !screen.otherInput
            status.isStandBy = screen.standby
        }
        return status
    }

    /// The RECEIVER_STATUS every sender on receiver-0 would get now (requestId 0): what the
    /// `flood` fault repeats.
    public var unsolicitedReceiverStatus: JSONValue { receiverStatusMessage(requestID: .unsolicited) }

    func receiverStatusMessage(requestID: RequestID) -> JSONValue {
        ReceiverMessage.receiverStatus(requestID: requestID, status: receiverStatus).json
    }

    /// RECEIVER_STATUS to the requester with `requestId` and to the other senders on
    /// `receiver-0` with 0.
    func receiverStatusToAll(requestID: RequestID) -> [EndpointReply] {
        [
            platformReply(receiverStatusMessage(requestID: requestID)),
            EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .others),
        ]
    }

    /// The TXT-record view of the running app.
    var advertisement: DeviceAdvertisementState {
        guard let app = running else { return .idle }
        if app.definition.isIdleScreen { return DeviceAdvertisementState(busy: false, statusText: "", runningAppID: app.definition.appID) }
        return DeviceAdvertisementState(busy: true, statusText: app.definition.displayName, runningAppID: app.definition.appID)
    }

    /// `advertisementChanged` when `st`/`rs`/the app differ from what was last announced.
    mutating func announceIfChanged() -> [DeviceOutput] {
        let current = advertisement
        guard current != announced else { return [] }
        announced = current
        return [.advertisementChanged(current)]
    }

    // MARK: App lifecycle

    mutating func launch(_ appID: String, requestID: RequestID, requester: Requester, now: Double,
                         effects: inout [DeviceOutput]) -> [EndpointReply] {
        guard let definition = catalogue.first(where: { $0.appID == appID }) else {
            log.warning("LAUNCH of unknown app \(appID)", ["appId": .string(appID), "reason": "NOT_FOUND"])
            return [platformReply(ReceiverMessage.launchError(requestID: requestID, reason: .notFound).json)]
        }
        let outcome = launchOutcome()
        if running?.definition.appID == appID, pendingLaunch == nil, outcome == .ready {
            // The app comes to the front: a cover lifts, and over CEC the TV wakes and takes the input.
            let woke = wake(now: now)
            return woke ? receiverStatusToAll(requestID: requestID) : [platformReply(receiverStatusMessage(requestID: requestID))]
        }
        let delay = launchDelay + (definition.showsWebPages ? max(0, profile.field.launch.pageAppExtra) : 0)
        if let earlier = pendingLaunch {
            pendingLaunch = nil
            if earlier.outcome == .hang {
                // A hung LAUNCH stays unanswered; a new one replaces it.
                log.info("hung LAUNCH of \(earlier.definition.appID) replaced by a LAUNCH of \(appID)", ["appId": .string(earlier.definition.appID)])
            } else {
                // The app loads for a while; a LAUNCH meanwhile cancels the one under way, as on a device.
                log.info("LAUNCH of \(earlier.definition.appID) cancelled by a LAUNCH of \(appID)", ["appId": .string(earlier.definition.appID)])
                effects += deliver([platformReply(ReceiverMessage.launchError(requestID: earlier.requestID, reason: .cancelled).json)],
                                   from: Self.platformEndpoint, requester: earlier.requester)
            }
        }
        guard delay > 0 || outcome == .hang else {
            if outcome == .cancelled {
                log.info("LAUNCH of \(appID) cancelled (profile \(profile.field.name))", ["appId": .string(appID), "reason": "CANCELLED"])
                return [platformReply(ReceiverMessage.launchError(requestID: requestID, reason: .cancelled).json)]
            }
            _ = wake(now: now)
            effects += terminateApp(reason: "replaced by \(appID)")
            effects += start(definition, now: now)
            return receiverStatusToAll(requestID: requestID)
        }
        pendingLaunch = PendingLaunch(definition: definition, requestID: requestID, requester: requester,
                                      due: outcome == .hang ? nil : now + delay, outcome: outcome)
        if outcome == .hang {
            log.warning("LAUNCH of \(appID) hangs: no reply will come", ["appId": .string(appID), "outcome": "hang"])
        } else {
            log.info("launching app \(appID) (\(outcome.rawValue) in \(delay) s)", ["appId": .string(appID), "outcome": .string(outcome.rawValue)])
        }
        return []
    }

    /// The app whose launch is due by `now` starts; the LAUNCH's reply goes to its sender and the
    /// new status to every other sender.
    mutating func finishLaunch(by now: Double) -> [DeviceOutput] {
        guard let launch = pendingLaunch, let due = launch.due, now >= due else { return [] }
        pendingLaunch = nil
        if launch.outcome == .cancelled {
            log.info("LAUNCH of \(launch.definition.appID) cancelled (profile \(profile.field.name))",
                     ["appId": .string(launch.definition.appID), "reason": "CANCELLED"])
            return deliver([platformReply(ReceiverMessage.launchError(requestID: launch.requestID, reason: .cancelled).json)],
                           from: Self.platformEndpoint, requester: launch.requester)
        }
        _ = wake(now: now)
        var out = terminateApp(reason: "replaced by \(launch.definition.appID)")
        out += start(launch.definition, now: now)
        out += deliver(receiverStatusToAll(requestID: launch.requestID), from: Self.platformEndpoint, requester: launch.requester)
        out += announceIfChanged()
        return out
    }

    mutating func stop(sessionID: String?, requestID: RequestID, effects: inout [DeviceOutput]) -> [EndpointReply] {
        guard let app = running, sessionID == nil || sessionID == app.sessionID else {
            log.warning("STOP of session \(sessionID ?? "(none)") that does not run", [
                "session": .string(sessionID ?? ""), "reason": "INVALID_SESSION_ID",
            ])
            return [platformReply(ReceiverMessage.invalidRequest(requestID: requestID, reason: .invalidSessionID).json)]
        }
        effects += terminateApp(reason: "STOP")
        return receiverStatusToAll(requestID: requestID)
    }

    /// Starts `definition` with a fresh session/transport id. A group member that played a
    /// group's media leaves that group's playback (its own sender casts).
    mutating func start(_ definition: AppDefinition, now: Double, sessionID given: String? = nil) -> [DeviceOutput] {
        let sessionID = given ?? ids.uuid()
        running = RunningApp(definition: definition, sessionID: sessionID, lastActivity: now)
        screen.lastWake = now
        player.reset()
        player.supportedMediaCommands = definition.supportedMediaCommands
        player.transportID = sessionID
        log.info("app \(definition.appID) (\(definition.displayName)) started", [
            "appId": .string(definition.appID), "session": .string(sessionID),
        ])
        return leaveGroupPlaybackForOwnCast()
    }

    /// Stops the running app: CLOSE from its transportId to every sender connected to it (as real
    /// devices do), virtual connections to it removed, media dropped.
    mutating func terminateApp(reason: String) -> [DeviceOutput] {
        guard let app = running else { return [] }
        let close = ConnectionMessage.close(reasonCode: nil).json.serialized()
        let out: [DeviceOutput] = virtualConnections.closeAll(to: app.transportID).map { vc in
            .send(CastMessage(sourceID: app.transportID, destinationID: vc.senderID, namespace: .connection, payload: .string(close)),
                  to: vc.connection)
        }
        running = nil
        player.reset()
        log.info("app \(app.definition.appID) stopped: \(reason)", [
            "appId": .string(app.definition.appID), "session": .string(app.sessionID),
        ])
        return out
    }
}
