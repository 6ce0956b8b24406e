import CastCore
import CastLogging
import CastProtocol

/// The field behaviour of the device's ``FieldProfile``: launch outcomes, the paused player's
/// idle screen, ambient mode, the TV's power and input (HDMI-CEC), and the screen's truth.
/// Timing only: every message sent here is one the device sends anyway.
extension ReceiverDevice {
    // MARK: Launches

    /// How the LAUNCH now received ends: a hang the control socket asked for, else a draw against
    /// the profile's chances (no draw when both are 0, so the ideal device's ids never shift).
    mutating func launchOutcome() -> LaunchOutcome {
        if launchesToHang > 0 {
            launchesToHang -= 1
            return .hang
        }
        let launch = profile.field.launch
        guard launch.hangProbability > 0 || launch.cancelledProbability > 0 else { return .ready }
        let draw = Double(fieldRandom.next() >> 11) / Double(1 << 53)
        if draw < launch.hangProbability { return .hang }
        if draw < launch.hangProbability + launch.cancelledProbability { return .cancelled }
        return .ready
    }

    /// The next `count` LAUNCHes are never answered (pychromecast#1247).
    public mutating func hangLaunches(_ count: Int) {
        launchesToHang = max(0, count)
        log.info("the next \(launchesToHang) LAUNCH(es) hang", ["count": .int(launchesToHang)])
    }

    /// A launch brings its app to the front: a cover lifts, and where the model does one-touch
    /// play over HDMI-CEC the TV wakes and takes this input. True when what RECEIVER_STATUS
    /// reports changed.
    mutating func wake(now: Double) -> Bool {
        screen.lastWake = now
        if let cover = screen.coveredBy {
            log.info("the app comes to the front: \(cover) cover lifts", ["coveredBy": .string(cover)])
            screen.coveredBy = nil
        }
        guard profile.isVideoDevice, profile.field.launchTakesInput, screen.standby || screen.otherInput else { return false }
        log.info("HDMI-CEC: the TV wakes and takes the input for the cast")
        screen.standby = false
        screen.otherInput = false
        return profile.field.reportsCEC
    }

    // MARK: Idle timers

    /// A LOAD or QUEUE_LOAD: the media activity that resets the idle timer on every model.
    static func isMediaActivity(_ payload: CastMessage.Payload) -> Bool {
        guard case .string(let text) = payload, let type = (try? JSONValue.parse(text))?["type"]?.string else { return false }
        return type == "LOAD" || type == "QUEUE_LOAD"
    }

    /// Media plays (or buffers): what keeps ambient mode away.
    var showsPlayingMedia: Bool {
        if running?.definition.keepsItselfAlive == true { return true }
        guard let session = player.session else { return false }
        return session.playerState == .playing || session.playerState == .buffering
    }

    /// When a PAUSED player goes to the idle screen; nil: not paused, or never.
    var pausedDeadline: Double? {
        guard let timeout = profile.field.pausedIdleTimeout, let app = running, app.definition.isMediaPlayer,
              let session = player.session, session.playerState == .paused, !session.awaitingCheck else { return nil }
        return session.anchor + max(0, timeout)
    }

    /// The paused player's timeout ran out: the app stops (CLOSE to its senders) and a video
    /// device shows the idle screen, Backdrop, reported with `isIdleScreen: true`
    /// (vishen/go-chromecast#141).
    mutating func idleScreenAfterPause(by now: Double) -> [DeviceOutput] {
        guard let deadline = pausedDeadline, now >= deadline, let app = running else { return [] }
        log.info("app \(app.definition.appID) stopped: paused for \(profile.field.pausedIdleTimeout ?? 0) s, idle screen",
                 ["appId": .string(app.definition.appID)])
        var out = terminateApp(reason: "paused too long")
        if profile.isVideoDevice { out += start(.backdrop, now: now) }
        out += deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
        out += announceIfChanged()
        return out
    }

    // MARK: Ambient mode and the TV

    /// When the profile's ambient mode covers the running app; nil: it does not.
    var ambientDeadline: Double? {
        guard profile.isVideoDevice, let ambient = profile.field.ambient, ambient.coversApp, screen.coveredBy == nil,
              let app = running, !app.definition.isIdleScreen, !showsPlayingMedia else { return nil }
        return screen.lastWake + max(0, ambient.after)
    }

    /// Ambient mode covers the app. Nothing goes on the wire: RECEIVER_STATUS still lists the
    /// app (home-assistant/core#136101).
    mutating func coverWithAmbient(by now: Double) {
        guard let deadline = ambientDeadline, now >= deadline else { return }
        screen.coveredBy = "ambient"
        log.info("ambient mode covers the app (profile \(profile.field.name))", ["coveredBy": "ambient"])
    }

    /// The control socket covers (`covered`) or uncovers the screen, as a screensaver or
    /// ambient mode would: nothing on the wire.
    public mutating func cover(_ covered: Bool, now: Double) -> [DeviceOutput] {
        let out = advance(to: now)
        screen.coveredBy = covered ? "control" : nil
        if !covered { screen.lastWake = now }
        log.info(covered ? "the screen is covered" : "the screen is uncovered", ["covered": .bool(covered)])
        return out
    }

    /// The TV goes to standby (or back on). Where the model reports CEC, every sender on
    /// receiver-0 gets the new RECEIVER_STATUS.
    public mutating func setStandby(_ standby: Bool, now: Double) -> [DeviceOutput] {
        setTVSwitch(\.standby, to: standby, now: now, standby ? "the TV is in standby" : "the TV is on")
    }

    /// The TV shows another HDMI input (or this one again); reported as ``setStandby(_:now:)``.
    public mutating func setOtherInput(_ other: Bool, now: Double) -> [DeviceOutput] {
        setTVSwitch(\.otherInput, to: other, now: now, other ? "the TV shows another input" : "the TV shows this input")
    }

    /// Sets one of the TV's switches (power, input); turning one off wakes the screen.
    private mutating func setTVSwitch(_ key: WritableKeyPath<ScreenSwitches, Bool>, to value: Bool, now: Double,
                                      _ message: String) -> [DeviceOutput] {
        var out = advance(to: now)
        guard screen[keyPath: key] != value else { return out }
        screen[keyPath: key] = value
        if !value { screen.lastWake = now }
        log.info(message, ["standby": .bool(screen.standby), "otherInput": .bool(screen.otherInput)])
        out += cecStatusChanged()
        return out
    }

    /// RECEIVER_STATUS (requestId 0) to every sender on receiver-0 when the model reports CEC.
    mutating func cecStatusChanged() -> [DeviceOutput] {
        guard profile.isVideoDevice, profile.field.reportsCEC else { return [] }
        return deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
    }

    /// What the screen shows now (after the timed transitions due by then); nil on a device
    /// without a screen.
    var screenState: ScreenState? {
        guard profile.isVideoDevice else { return nil }
        if screen.standby { return ScreenState(shows: .off, appVisible: false) }
        if screen.otherInput { return ScreenState(shows: .otherInput, appVisible: false) }
        guard let app = running, !app.definition.isIdleScreen else { return ScreenState(shows: .ambient, appVisible: false) }
        if let cover = screen.coveredBy { return ScreenState(shows: .ambient, appVisible: false, coveredBy: cover) }
        return ScreenState(shows: .app, appVisible: true)
    }
}
