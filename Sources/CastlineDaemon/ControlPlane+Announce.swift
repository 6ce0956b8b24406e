import CastCore
import CastLogging
import CastProtocol
import CastSender

/// Announcements that give back what was playing (`POST /v1/devices/{device}/announce`).
extension ControlPlane {
    /// Plays `arguments.media` on the device and brings back what it showed before: a snapshot
    /// (``AnnouncementSnapshot``), the announcement at its volume until it finishes (or its
    /// timeout), then the app, media, position, tracks, queue, pause and volume. Jobs on the
    /// device wait it out (the device is the command's until the end). The answer says what came
    /// back (`restored`: true, "partly" or false, with `reason`); the volume always does.
    func announce(_ reference: String, _ arguments: AnnounceArguments) async throws(ControlError) -> JSONValue {
        if !arguments.wait {
            let entry = try await registry.resolve(reference)
            var waiting = arguments
            waiting.wait = true
            Task { _ = await self.execute(.announce(entry.device.id, waiting)) }
            return ["device": .string(entry.device.friendlyName), "id": .string(entry.device.id), "announcement": .string(arguments.media),
                    "announcing": true]
        }
        let (entry, link) = try await registry.link(reference)
        let device = entry.device
        let log = self.log.with(["device": .string(device.id)])
        // A fresh status, so the position is now's.
        if let app = await link.application, app.isIdleScreen != true, link.remoteMediaClient.mediaStatus != nil {
            _ = await link.remoteMediaClient.requestStatus().result
        }
        let status = await link.deviceStatus
        let snapshot = AnnouncementSnapshot(app: await link.application, media: link.remoteMediaClient.mediaStatus,
                                            volume: status?.volumeLevel, muted: status?.isMuted)
        let previousOwner = await registry.entry(device.id)?.owner
        let started = MonotonicClock.seconds()

        var cast = CastArguments(media: arguments.media)
        cast.localMedia = arguments.localMedia
        cast.contentType = arguments.contentType
        cast.title = "Announcement"
        let announced: Result<Void, ControlError>
        do throws(ControlError) {
            guard case .media(let url, let type, let format, _) = try await mediaSource(cast, device: device) else {
                throw ControlError.usage("announce_web_page", "\(arguments.media) is a web page; an announcement is audio or video")
            }
            try checkTurn(device)
            await registry.claim(device.id, owner: CommandOwner.announcement, contentID: url, untilReleased: true)
            if let volume = arguments.volume {
                try Self.check(await link.setDeviceVolume(Double(volume) / 100).result.map { _ in () }, "SET_VOLUME", device: device)
                if snapshot.muted == true { try Self.check(await link.setDeviceMuted(false).result.map { _ in () }, "SET_VOLUME", device: device) }
            }
            try await play(cast.mediaInformation(url: url, contentType: type, format: format), on: link, device: device,
                           timeout: arguments.timeout, log: log)
            announced = .success(())
        } catch {
            announced = .failure(error)
        }
        let elapsed = MonotonicClock.seconds() - started
        let (plan, partly) = snapshot.plan(elapsed: elapsed)
        var answer = JSONObject()
        answer.set("device", .string(device.friendlyName))
        answer.set("id", .string(device.id))
        answer.set("announcement", .string(arguments.media))
        answer.set("seconds", .double((elapsed * 10).rounded() / 10))
        if case .failure(let error) = announced { answer.set("announcementError", .string(error.message)) }
        var restored: JSONValue = true
        var reason: String? = partly
        // A newer command took the device during the announcement (the lane was free while it
        // played): it wins, nothing is restored over it (the volume still is).
        if let ticket = Self.ticket { lanes.leave(ticket) }
        if let ticket = Self.ticket, lanes.isSuperseded(ticket) || !lanes.tryStart(ticket) {
            restored = false
            reason = "a newer command took the device during the announcement; what it shows stays"
        } else if let job = previousOwner.flatMap({ CommandOwner.isCommand($0) ? nil : $0 }), let driver = await daemon.driver(named: job),
                  await driver.handBack(device.id, media: snapshot.media, why: "the announcement ended") {
            // The job it interrupted shows its own content again (the page, the playlist's item
            // and position) through its own state: nothing races its recast.
            if await driver.waitUntilShown(device.id, timeout: 30) {
                answer.set("restoredBy", .string("job \(job)"))
            } else {
                (restored, reason) = (false, "job \(job) did not show its content again within 30 s")
            }
            await registry.release(device.id, owner: CommandOwner.announcement)
        } else {
            do throws(ControlError) {
                switch try await restore(plan, on: link, device: device, previousOwner: previousOwner) {
                case .restored(let before): if let before { answer.set("before", .string(before)) }
                case .notRestored(let why): (restored, reason) = (false, why)
                }
            } catch {
                (restored, reason) = (false, error.message)
            }
            if previousOwner == nil || restored == false { await registry.release(device.id, owner: CommandOwner.announcement) }
        }
        // The volume and mute come back whatever else did.
        if let volume = snapshot.volume, arguments.volume != nil {
            _ = await link.setDeviceVolume(volume).result
        }
        if let muted = snapshot.muted, muted != (await link.deviceStatus?.isMuted ?? muted) { _ = await link.setDeviceMuted(muted).result }
        if restored == true, reason != nil { restored = "partly" }
        answer.set("restored", restored)
        if let reason { answer.set("reason", .string(reason)) }
        log.info("\(device.friendlyName): announcement \(arguments.media) played for \(elapsed.formatted) s; restored: \(restored.serialized())", [
            "announcement": .string(arguments.media), "restored": .string(restored.serialized()), "reason": .string(reason ?? ""),
        ])
        daemon.events.emit(.device, "announcement", device: device.id, ["restored": restored, "seconds": .double(elapsed)])
        answer.set("after", await result(entry))
        return .object(answer)
    }

    enum RestoreOutcome {
        /// Back as it was; `before`: what the device showed when there was nothing to bring back.
        case restored(before: String?)
        /// Could not come back (why); the device is left idle.
        case notRestored(String)
    }

    /// Brings back what `plan` says (after the announcement): the app, then the media or the
    /// queue, playing or paused; the previous owner (a job) gets the device back.
    private func restore(_ plan: AnnouncementSnapshot.Restore, on link: CastSession, device: CastDevice,
                         previousOwner: String?) async throws(ControlError) -> RestoreOutcome {
        switch plan {
        case .nothing(let why):
            // The device was idle (or its app had nothing on): it goes back to that.
            try await stopAnnouncementApp(on: link, device: device)
            return .restored(before: why)
        case .impossible(let why):
            try await stopAnnouncementApp(on: link, device: device)
            return .notRestored(why + "; the device is left idle")
        case .load(let appID, let media, let options):
            try await relaunch(appID, on: link, device: device)
            let wanted: PlayerState = options.autoplay ? .playing : .paused
            switch await link.remoteMediaClient.loadAndWait(media, options: options, until: wanted, timeout: 30) {
            case .success: break
            case .failure(let error): throw ControlError(.refused, "restore_failed", "\(device.friendlyName): \(error)")
            }
            if let previousOwner { await registry.claim(device.id, owner: previousOwner, contentID: media.contentURL ?? media.contentID) }
        case .queue(let appID, let items, let startIndex, let startTime, let repeatMode, let autoplay):
            try await relaunch(appID, on: link, device: device)
            let updates = link.remoteMediaClient.statusUpdates()
            try Self.check(await link.remoteMediaClient.queueLoad(items, startIndex: startIndex, repeatMode: repeatMode, startTime: startTime)
                .result.map { _ in () }, "QUEUE_LOAD", device: device)
            if !autoplay { try Self.check(await link.remoteMediaClient.pause().result.map { _ in () }, "PAUSE", device: device) }
            let wanted: PlayerState = autoplay ? .playing : .paused
            if link.remoteMediaClient.mediaStatus?.effectivePlayerState != wanted,
               await updates.first(within: 30, where: { $0?.effectivePlayerState == wanted }) == nil {
                throw ControlError(.unavailable, "restore_failed", "\(device.friendlyName): the queue is back but not \(wanted.rawValue) within 30 s")
            }
            if let previousOwner, let media = items[startIndex].media {
                await registry.claim(device.id, owner: previousOwner, contentID: media.contentURL ?? media.contentID)
            }
        }
        return .restored(before: nil)
    }

    /// Launches the default receiver and plays `media` until it finishes (IDLE), fails, or
    /// `timeout` seconds pass (then it is stopped).
    private func play(_ media: MediaInformation, on link: CastSession, device: CastDevice, timeout: Double, log: Logger) async throws(ControlError) {
        _ = try await Self.launch(receiverAppID, on: link, device: device)
        let playing: MediaStatus
        switch await link.remoteMediaClient.loadAndWait(media, until: .playing, timeout: min(30, timeout)) {
        case .success(let status): playing = status
        case .failure(let error):
            throw ControlError(error.isRefusal ? .refused : .unavailable, "announcement_failed", "\(device.friendlyName): \(error)")
        }
        // It plays: a newer command may take the device from here on (it is not restored over).
        if let ticket = Self.ticket { lanes.leave(ticket) }
        // Subscribed once it plays, so only statuses from then on count: its IDLE, a newer media
        // session (another sender's load), or no media at all.
        let session = playing.mediaSessionID
        let updates = link.remoteMediaClient.statusUpdates()
        let ended: @Sendable (MediaStatus?) -> Bool = { status in
            guard let status else { return true }
            return status.mediaSessionID > session || (status.mediaSessionID == session && status.playerState == .idle)
        }
        if ended(link.remoteMediaClient.mediaStatus) { return }
        if await updates.first(within: timeout, where: ended) == nil {
            log.warning("\(device.friendlyName): the announcement did not finish within \(timeout.formatted) s: stopped", ["timeout": .double(timeout)])
            _ = await link.remoteMediaClient.stop().result
        }
    }

    /// Launches `appID` unless it runs (the announcement ran in the default receiver).
    private func relaunch(_ appID: String, on link: CastSession, device: CastDevice) async throws(ControlError) {
        if let running = await link.application, running.appID == appID { return }
        _ = try await Self.launch(appID, on: link, device: device)
    }

    /// Leaves the device idle: the app the announcement ran in is stopped.
    private func stopAnnouncementApp(on link: CastSession, device: CastDevice) async throws(ControlError) {
        guard let running = await link.application, running.appID == receiverAppID else { return }
        do { try await link.stopApplication() } catch {
            throw ControlError(.unavailable, "stop_failed", "\(device.friendlyName): cannot stop the announcement's app: \(error)")
        }
    }
}
