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
        let requestId: RequestID
        switch RequestEnvelope(payload) {
        case .invalid(let id, let why):
            return invalidCommand(id, why)
        case .valid(let value, let id):
            json = value
            requestId = id
        }
        let message: ReceiverMessage
        do {
            message = try ReceiverMessage(json: json)
        } catch {
            if json["type"]?.string == "LAUNCH" {
                log.warning("LAUNCH rejected: \(error)", ["type": "LAUNCH", "reason": "BAD_PARAMETER"])
                return [platformReply(ReceiverMessage.launchError(requestId: requestId, reason: .badParameter).json)]
            }
            return invalidCommand(requestId, "\(error)")
        }
        log.debug("receiver request \(message.typeName)", ["type": .string(message.typeName), "requestId": .int(requestId.rawValue)])
        switch message {
        case .getStatus:
            return [platformReply(receiverStatusMessage(requestId: requestId))]
        case .launch(let request):
            return launch(request.appId, requestId: requestId, requester: requester, now: now, effects: &effects)
        case .stop(_, let sessionId):
            return stop(sessionId: sessionId, requestId: requestId, effects: &effects)
        case .setVolume(_, let requested):
            var updated = volume
            if let level = requested.level { updated.level = Self.deviceLevel(level) }
            if let muted = requested.muted { updated.muted = muted }
            guard updated != volume else { return [platformReply(receiverStatusMessage(requestId: requestId))] }
            volume = updated
            log.info("device volume \(updated.level ?? 0)\(updated.muted == true ? " (muted)" : "")", [
                "level": .double(updated.level ?? 0), "muted": .bool(updated.muted ?? false),
            ])
            return receiverStatusToAll(requestId: requestId)
        case .getAppAvailability(_, let appIds):
            let entries = appIds.map { appId in
                AppAvailabilityEntry(appId: appId, availability: catalogue.contains { $0.appId == appId } ? .available : .unavailable)
            }
            return [platformReply(ReceiverMessage.appAvailability(requestId: requestId, availability: entries).json)]
        case .receiverStatus, .launchError, .invalidRequest, .appAvailability, .unknown:
            return invalidCommand(requestId, "unknown receiver command \(message.typeName)")
        }
    }

    func invalidCommand(_ requestId: RequestID, _ why: String) -> [EndpointReply] {
        log.warning("rejected receiver request: \(why)", ["reason": "INVALID_COMMAND", "requestId": .int(requestId.rawValue)])
        return [platformReply(ReceiverMessage.invalidRequest(requestId: requestId, reason: .invalidCommand).json)]
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
                appId: definition.appId, appType: "WEB", displayName: definition.displayName, iconUrl: definition.iconUrl,
                isIdleScreen: definition.isIdleScreen, launchedFromCloud: false, namespaces: definition.announcedNamespaces,
                senderConnected: !virtualConnections.connections(to: app.transportId).isEmpty, sessionId: app.sessionId,
                statusText: definition.displayName, transportId: app.transportId, universalAppId: definition.appId
            )]
        }
        if profile.isVideoDevice {
            status.isActiveInput = running.map { !$0.definition.isIdleScreen } ?? false
            status.isStandBy = false
        }
        return status
    }

    func receiverStatusMessage(requestId: RequestID) -> JSONValue {
        ReceiverMessage.receiverStatus(requestId: requestId, status: receiverStatus).json
    }

    /// RECEIVER_STATUS to the requester with `requestId` and to the other senders on
    /// `receiver-0` with 0.
    func receiverStatusToAll(requestId: RequestID) -> [EndpointReply] {
        [
            platformReply(receiverStatusMessage(requestId: requestId)),
            EndpointReply(.receiver, receiverStatusMessage(requestId: .unsolicited), to: .others),
        ]
    }

    /// The TXT-record view of the running app.
    var advertisement: DeviceAdvertisementState {
        guard let app = running else { return .idle }
        if app.definition.isIdleScreen { return DeviceAdvertisementState(busy: false, statusText: "", runningAppId: app.definition.appId) }
        return DeviceAdvertisementState(busy: true, statusText: app.definition.displayName, runningAppId: app.definition.appId)
    }

    /// `advertisementChanged` when `st`/`rs`/the app differ from what was last announced.
    mutating func announceIfChanged() -> [DeviceOutput] {
        let current = advertisement
        guard current != announced else { return [] }
        announced = current
        return [.advertisementChanged(current)]
    }

    // MARK: App lifecycle

    mutating func launch(_ appId: String, requestId: RequestID, requester: Requester, now: Double,
                         effects: inout [DeviceOutput]) -> [EndpointReply] {
        guard let definition = catalogue.first(where: { $0.appId == appId }) else {
            log.warning("LAUNCH of unknown app \(appId)", ["appId": .string(appId), "reason": "NOT_FOUND"])
            return [platformReply(ReceiverMessage.launchError(requestId: requestId, reason: .notFound).json)]
        }
        if running?.definition.appId == appId, pendingLaunch == nil {
            return [platformReply(receiverStatusMessage(requestId: requestId))]
        }
        guard launchDelay > 0 else {
            effects += terminateApp(reason: "replaced by \(appId)")
            start(definition)
            return receiverStatusToAll(requestId: requestId)
        }
        // The app loads for a while; a LAUNCH meanwhile cancels the one under way, as on a device.
        if let earlier = pendingLaunch {
            log.info("LAUNCH of \(earlier.definition.appId) cancelled by a LAUNCH of \(appId)", ["appId": .string(earlier.definition.appId)])
            effects += deliver([platformReply(ReceiverMessage.launchError(requestId: earlier.requestId, reason: .cancelled).json)],
                               from: Self.platformEndpoint, requester: earlier.requester)
        }
        pendingLaunch = PendingLaunch(definition: definition, requestId: requestId, requester: requester, due: now + launchDelay)
        log.info("launching app \(appId) (ready in \(launchDelay) s)", ["appId": .string(appId)])
        return []
    }

    /// The app whose launch is due by `now` starts; the LAUNCH's reply goes to its sender and the
    /// new status to every other sender.
    mutating func finishLaunch(by now: Double) -> [DeviceOutput] {
        guard let launch = pendingLaunch, now >= launch.due else { return [] }
        pendingLaunch = nil
        var out = terminateApp(reason: "replaced by \(launch.definition.appId)")
        start(launch.definition)
        out += deliver(receiverStatusToAll(requestId: launch.requestId), from: Self.platformEndpoint, requester: launch.requester)
        out += announceIfChanged()
        return out
    }

    mutating func stop(sessionId: String?, requestId: RequestID, effects: inout [DeviceOutput]) -> [EndpointReply] {
        guard let app = running, sessionId == nil || sessionId == app.sessionId else {
            log.warning("STOP of session \(sessionId ?? "(none)") that does not run", [
                "session": .string(sessionId ?? ""), "reason": "INVALID_SESSION_ID",
            ])
            return [platformReply(ReceiverMessage.invalidRequest(requestId: requestId, reason: .invalidSessionID).json)]
        }
        effects += terminateApp(reason: "STOP")
        return receiverStatusToAll(requestId: requestId)
    }

    /// Starts `definition` with a fresh session/transport id.
    mutating func start(_ definition: AppDefinition) {
        let sessionId = ids.uuid()
        running = RunningApp(definition: definition, sessionId: sessionId)
        player.reset()
        player.supportedMediaCommands = definition.supportedMediaCommands
        player.transportId = sessionId
        log.info("app \(definition.appId) (\(definition.displayName)) started", [
            "appId": .string(definition.appId), "session": .string(sessionId),
        ])
    }

    /// Stops the running app: CLOSE from its transportId to every sender connected to it (as real
    /// devices do), virtual connections to it removed, media dropped.
    mutating func terminateApp(reason: String) -> [DeviceOutput] {
        guard let app = running else { return [] }
        let close = ConnectionMessage.close(reasonCode: nil).json.serialized()
        let out: [DeviceOutput] = virtualConnections.closeAll(to: app.transportId).map { vc in
            .send(CastMessage(sourceID: app.transportId, destinationID: vc.senderId, namespace: .connection, payload: .string(close)),
                  to: vc.connection)
        }
        running = nil
        player.reset()
        log.info("app \(app.definition.appId) stopped: \(reason)", [
            "appId": .string(app.definition.appId), "session": .string(app.sessionId),
        ])
        return out
    }
}
