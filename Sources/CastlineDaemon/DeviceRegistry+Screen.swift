import CastlineJobs
import CastCore
import CastLogging
import CastProtocol
import CastSender

/// Whether each device's screen shows its app (``ScreenReading``), kept current with the link's
/// view, and a timer for the moment the model's ambient mode is due to cover a page.
extension DeviceRegistry {
    static func isPlaying(_ status: MediaStatus) -> Bool {
        status.playerState == .playing || status.playerState == .buffering
    }

    /// Reads whether the screen shows the app (``ScreenReading``); a change is logged and sent as
    /// a `screen` event. `playing`: the media plays now (nil: no media status).
    func readScreen(_ id: String, playing: Bool?) {
        guard var entry = entries[id] else { return }
        let now = MonotonicClock.seconds()
        let isVideo = entry.device.capabilities?.contains(.videoOut) ?? true
        guard isVideo, !entry.device.isGroup else { return }
        let app = entry.view.state == .connected ? entry.view.runningApp : nil
        if let app {
            if entry.screenApp?.session != app.sessionID { entry.screenApp = (app.sessionID, now) }
        } else {
            entry.screenApp = nil
        }
        // castline's receiver plays silent media of its own all the time.
        let mediaPlaying = app != nil && (playing == true || (app?.appID != nil && app?.appID == field?.castlineReceiverAppID))
        if mediaPlaying { entry.lastPlayed = now }
        let inputs = ScreenReading.Inputs(connected: entry.link != nil && entry.view.state == .connected, status: entry.view.status, app: app,
                                          appSince: entry.screenApp?.since, mediaPlaying: mediaPlaying, lastPlayed: entry.lastPlayed,
                                          profile: field?.knowledge(for: entry.device).profile, now: now)
        let reading = ScreenReading.read(inputs)
        entry.coverTimer?.cancel()
        entry.coverTimer = nil
        if let deadline = ScreenReading.coverDeadline(inputs), deadline > now {
            entry.coverTimer = Task { [weak self] in
                try? await Task.sleep(for: .seconds(deadline - now + 0.001))
                guard !Task.isCancelled else { return }
                await self?.coverDue(id)
            }
        }
        let before = entry.screen
        entry.screen = reading
        entries[id] = entry
        guard before != reading else { return }
        listed[id] = nil
        log.info("\(entry.device.friendlyName): screen: \(reading.text)", [
            "device": .string(id), "visible": .string(reading.visible.map { "\($0)" } ?? "unknown"),
            "reason": .string(reading.reason?.rawValue ?? ""), "source": .string(reading.source?.rawValue ?? ""),
        ])
        events.emit(.device, "screen", device: id, ["screen": reading.json, "before": before?.json ?? .null])
    }

    /// The model's ambient mode is due to cover the app: read the screen again, tell observers.
    func coverDue(_ id: String) async {
        entries[id]?.coverTimer = nil
        await notify(id)
    }
}
