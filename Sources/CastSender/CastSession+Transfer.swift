import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Stream transfer: moving the session to another device on request, and following it when it
/// was moved elsewhere.
extension CastSession {
    /// Moves the session to `target`: reads the media status here, launches the app there, loads
    /// the same media at the same position (and tracks), then stops the app here. Listeners get
    /// ``CastSessionEvent/didResume(transferred:)`` with the new ``device``.
    public func transfer(to target: CastDevice) async throws(CastSessionError) {
        guard case .connected = machine.state, let app = application else {
            throw .requestFailed(step: "transfer", .disconnected("the session is \(machine.state.name)"))
        }
        guard !transferring else { throw .requestFailed(step: "transfer", .disconnected("a transfer is already under way")) }
        guard target.id != device.id else { throw .requestFailed(step: "transfer", .invalidRequest(ErrorReason(rawValue: "already on \(target)"))) }
        transferring = true
        let work = beginOpenAttempt()   // end() waits for the whole move: it closes the old connection last
        defer {
            transferring = false
            finishOpenAttempt(work)
        }
        let moved: Result<Void, CastSessionError> = await Self.$movingRequest.withValue(true) {
            do throws(CastSessionError) {
                let status = try await mediaStatusForTransfer()
                try await moveSession(to: target, app: app, status: status)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try moved.get()
    }

    func moveSession(to target: CastDevice, app: ApplicationInfo, status: MediaStatus?) async throws(CastSessionError) {
        log.info("transferring to \(target)", ["target": .string(target.id)])
        let previous: DeviceSnapshot
        do {
            previous = try await switchDevice(to: target, policy: .joinOrLaunch)
        } catch {
            if case .cancelled = error {
                log.debug("transfer to \(target) given up: the session ended", ["target": .string(target.id)])
            } else {
                log.warning("transfer to \(target) failed: \(error); staying on \(device)", ["target": .string(target.id)])
            }
            throw error
        }
        if let status, let media = status.media {
            let load = await remoteMediaClient.load(media, options: MediaLoadOptions(
                autoplay: status.playerState != .paused, startTime: status.currentTime, activeTrackIDs: status.activeTrackIDs,
                playbackRate: status.playbackRate))
            if case .failure(let error) = await load.result {
                log.warning("transfer: LOAD on \(target) failed: \(error)", ["target": .string(target.id)])
            }
        }
        // Stop the app on the old device over the old connection, then let it go.
        if let oldConnection = previous.connection {
            let stop = ReceiverMessage.stop(requestID: RequestID(1), sessionID: app.sessionID).json
            try? await oldConnection.send(CastMessage(source: options.senderID, destination: EndpointID.receiver0.rawValue,
                                                      namespace: .receiver, json: stop))
            await oldConnection.close()
        }
        log.info("transferred from \(previous.device) to \(target)", ["from": .string(previous.device.id), "to": .string(target.id)])
        dropResumeRecord(of: previous.device)
        await apply(.transferred)
    }

    /// The session left `old` for good: its resume record would send a restarted castline back to
    /// an app session that no longer runs there. (The new device's record is saved by the
    /// `transferred` transition.)
    func dropResumeRecord(of old: CastDevice) {
        guard let resumeStore, old.id != device.id else { return }
        do { try resumeStore.remove(deviceID: old.id) } catch {
            log.warning("cannot delete the resume record of \(old): \(error)", ["path": .string(resumeStore.path)])
        }
    }

    /// What ``switchDevice(to:policy:)`` replaced, to put back.
    struct DeviceSnapshot {
        let device: CastDevice
        let connection: CastConnection?
        let application: ApplicationInfo?
        let generation: Int
        let mediaStatus: MediaStatus?
        let deviceAuth: DeviceAuthResult
        let deviceStatus: CastDeviceStatus?
    }

    /// Connects to `target` and joins (or launches, per `policy`) the app there in place of the
    /// current device. On failure everything is as before and the error is thrown.
    func switchDevice(to target: CastDevice, policy: CastOptions.JoinPolicy) async throws(CastSessionError) -> DeviceSnapshot {
        // Ended while the transfer got here (end() cancelled what ran then): start nothing new.
        guard case .connected = machine.state else { throw .cancelled }
        let previous = DeviceSnapshot(device: device, connection: connection, application: application, generation: generation,
                                      mediaStatus: remoteMediaClient.mediaStatus, deviceAuth: deviceAuth, deviceStatus: deviceStatus)
        bumpGeneration()
        device = target
        log = Self.logger(options: options, device: target, localID: localID)
        do {
            application = try await openAndJoin(resume: nil, policy: policy)
        } catch {
            await restore(previous)
            throw error
        }
        // Ended meanwhile (end() closed whichever connection was current): drop both.
        guard case .connected = machine.state else {
            await connection?.close()
            await previous.connection?.close()
            throw .cancelled
        }
        return previous
    }

    /// Back to the device, connection and app of `previous` (closing the connection made since).
    func restore(_ previous: DeviceSnapshot) async {
        // Switch back first: the attempt's reader must find its generation stale when it ends.
        let attempt = connection
        connection = previous.connection
        application = previous.application
        device = previous.device
        generation = previous.generation
        log = Self.logger(options: options, device: previous.device, localID: localID)
        deviceAuth = previous.deviceAuth
        deviceStatus = previous.deviceStatus
        remoteMediaClient.apply(previous.mediaStatus.map { [$0] } ?? [])
        if let attempt, attempt !== previous.connection { await attempt.close() }
        guard case .connected = machine.state else {
            // Ended meanwhile: nothing to go back to.
            await previous.connection?.close()
            return
        }
        // The old connection may have ended while we were away (its end was stale then).
        if let old = previous.connection, !old.isActive {
            await connectionEnded(await old.closeReason, generation: previous.generation)
        }
    }

    /// Set for the session's own requests while it moves between devices (``transferring``):
    /// anything else is refused then, so no command reaches a device the session is only probing.
    @TaskLocal static var movingRequest = false

    func setTransferCandidates(_ provider: (@Sendable () async -> [CastDevice])?) {
        transferCandidates = provider
    }

    /// The app stopped here: if the same app now plays the same media on another known device,
    /// the session moved there. Joins it and reports ``CastSessionEvent/didResume(transferred:)``.
    func followTransfer(of app: ApplicationInfo) async -> Bool {
        guard let provider = transferCandidates, let contentID = remoteMediaClient.mediaStatus?.media?.contentID else { return false }
        let here = device
        let candidates = await provider().filter { $0.id != here.id }.prefix(16)
        guard !candidates.isEmpty else { return false }
        return await Self.$movingRequest.withValue(true) {
            await searchCandidates(Array(candidates), app: app, contentID: contentID, from: here)
        }
    }

    func searchCandidates(_ candidates: [CastDevice], app: ApplicationInfo, contentID: String, from here: CastDevice) async -> Bool {
        transferring = true
        let work = beginOpenAttempt()   // end() waits for the search: it closes or restores connections
        defer {
            transferring = false
            finishOpenAttempt(work)
        }
        log.info("app \(app.appID) stopped here; looking for it on \(candidates.count) other device(s)", stateFields())
        for candidate in candidates {
            guard case .connected = machine.state else { return false }
            guard let previous = try? await switchDevice(to: candidate, policy: .joinOnly) else { continue }
            if application?.appID == app.appID, remoteMediaClient.mediaStatus?.media?.contentID == contentID {
                await previous.connection?.close()
                log.info("session moved from \(here) to \(candidate): app \(app.appID) plays \(contentID) there", [
                    "from": .string(here.id), "to": .string(candidate.id),
                ])
                dropResumeRecord(of: previous.device)
                await apply(.transferred)
                return true
            }
            await restore(previous)
        }
        log.info("app \(app.appID) not found on another device", stateFields())
        return false
    }

    func mediaStatusForTransfer() async throws(CastSessionError) -> MediaStatus? {
        let request = await remoteMediaClient.requestStatus()
        switch await request.result {
        case .success(let status): return status
        case .failure(let error): throw .requestFailed(step: "GET_STATUS (transfer)", error)
        }
    }
}
