/// How a model behaves in the field, beyond the protocol: when it closes an app that shows no
/// media, what resets that timer, how a LAUNCH goes, when ambient mode covers the screen, whether
/// it reports HDMI-CEC, when it reboots on its own. Value type.
///
/// A profile changes timing, never the protocol: every message a device sends under a profile is
/// one it also sends without (a LAUNCH_ERROR CANCELLED, a CLOSE, a RECEIVER_STATUS); only the
/// moment differs. The figures are what users reported (docs/simulator.md's profiles table, with a
/// source for each); where a report is vague the figure is a default, overridable in the config.
public struct FieldProfile: Sendable, Hashable {
    /// What resets the timer that closes an app showing no media.
    public enum IdleReset: String, Sendable, Hashable, CaseIterable {
        /// Only media activity: a LOAD, media shown. What Google told Home Assistant (an app is
        /// suspended because it plays no media, home-assistant/core#53882).
        case media
        /// Any message a sender sends to the app (the simulator's behaviour before issue 47).
        case anyMessage = "any-message"
    }

    /// How a LAUNCH goes.
    public struct Launch: Sendable, Hashable {
        /// LAUNCH → the app runs; nil: the simulator's `--launch-delay`.
        public var readyAfter: Double?
        /// Extra seconds for a web-page app (DashCast, Home Assistant): it fetches its page first.
        public var pageAppExtra: Double = 0
        /// Chance (0…1) that a LAUNCH is answered `LAUNCH_ERROR` `CANCELLED` instead.
        public var cancelledProbability: Double = 0
        /// Chance (0…1) that a LAUNCH is never answered (the app does not start either).
        public var hangProbability: Double = 0

        public init(readyAfter: Double? = nil, pageAppExtra: Double = 0, cancelledProbability: Double = 0, hangProbability: Double = 0) {
            self.readyAfter = readyAfter
            self.pageAppExtra = pageAppExtra
            self.cancelledProbability = cancelledProbability
            self.hangProbability = hangProbability
        }
    }

    /// Ambient mode (screensaver, photo frame).
    public struct Ambient: Sendable, Hashable {
        /// Seconds without media shown before ambient mode starts.
        public var after: Double
        /// Ambient mode also covers a running app (which keeps running: RECEIVER_STATUS still
        /// lists it); false: it starts only when no app runs.
        public var coversApp: Bool

        public init(after: Double, coversApp: Bool) {
            self.after = after
            self.coversApp = coversApp
        }
    }

    /// A reboot the device does on its own once a day, somewhere in a window of local time.
    public struct DailyReboot: Sendable, Hashable {
        /// Start of the window, seconds after local midnight.
        public var windowStart: Double
        /// Length of the window in seconds; the reboot's moment in it is drawn from the seed.
        public var windowLength: Double
        /// Seconds the device is down.
        public var downFor: Double
        /// Seconds in a day (less under a time scale).
        public var dayLength: Double = 86_400

        public init(windowStart: Double, windowLength: Double, downFor: Double) {
            self.windowStart = windowStart
            self.windowLength = windowLength
            self.downFor = downFor
        }

        /// Seconds from a moment `dayPosition` seconds after local midnight to the next reboot:
        /// at `draw` (0..<1) of the way through the window, and at least `minimumDelay` away
        /// (after a reboot, the window's length and the downtime: one reboot a day).
        public func secondsUntilReboot(dayPosition: Double, draw: Double, minimumDelay: Double = 0) -> Double {
            guard dayLength > 0 else { return .infinity }
            let target = windowStart + min(max(draw, 0), 1) * windowLength
            var delay = (target - dayPosition).truncatingRemainder(dividingBy: dayLength)
            if delay < 0 { delay += dayLength }
            while delay < minimumDelay { delay += dayLength }
            return delay
        }
    }

    /// The profile's name (`"nest-hub"`, …; `"ideal"` for the simulator's well-behaved device).
    public var name: String
    /// Close an app that is not a media player, or a media app without media, this many seconds
    /// after its timer was last reset; nil: never.
    public var appIdleTimeout: Double?
    /// A PAUSED player goes to the idle screen (the app stops, Backdrop runs with
    /// `isIdleScreen: true`) this many seconds after it paused; nil: never.
    public var pausedIdleTimeout: Double?
    public var idleResetBy: IdleReset
    public var launch: Launch
    /// nil: no ambient mode of its own (the control socket's `cover` still covers).
    public var ambient: Ambient?
    /// RECEIVER_STATUS carries `isActiveInput` / `isStandBy` (HDMI-CEC). Only video devices can.
    public var reportsCEC: Bool
    /// A LAUNCH wakes the TV and takes its input over HDMI-CEC (one-touch play).
    public var launchTakesInput: Bool
    public var dailyReboot: DailyReboot?

    public init(name: String, appIdleTimeout: Double? = nil, pausedIdleTimeout: Double? = nil, idleResetBy: IdleReset = .anyMessage,
                launch: Launch = Launch(), ambient: Ambient? = nil, reportsCEC: Bool = true, launchTakesInput: Bool = true,
                dailyReboot: DailyReboot? = nil) {
        self.name = name
        self.appIdleTimeout = appIdleTimeout
        self.pausedIdleTimeout = pausedIdleTimeout
        self.idleResetBy = idleResetBy
        self.launch = launch
        self.ambient = ambient
        self.reportsCEC = reportsCEC
        self.launchTakesInput = launchTakesInput
        self.dailyReboot = dailyReboot
    }

    /// Every duration divided by `factor` (a field day compressed: 60 makes a day 24 minutes).
    /// Probabilities and flags stay.
    public func scaled(by factor: Double) -> FieldProfile {
        guard factor.isFinite, factor > 0, factor != 1 else { return self }
        var copy = self
        copy.appIdleTimeout = appIdleTimeout.map { $0 / factor }
        copy.pausedIdleTimeout = pausedIdleTimeout.map { $0 / factor }
        copy.launch.readyAfter = launch.readyAfter.map { $0 / factor }
        copy.launch.pageAppExtra = launch.pageAppExtra / factor
        copy.ambient?.after /= factor
        if var reboot = dailyReboot {
            reboot.windowStart /= factor
            reboot.windowLength /= factor
            reboot.downFor /= factor
            reboot.dayLength /= factor
            copy.dailyReboot = reboot
        }
        return copy
    }
}

extension FieldProfile {
    /// The simulator's well-behaved device, as before issue 47: no idle close unless
    /// `--app-idle-timeout` says so, any message resets the timer, launches always succeed,
    /// no ambient mode, no reboots; video devices report CEC as they did.
    public static let ideal = FieldProfile(name: "ideal")

    /// A Chromecast dongle (3rd gen and older) on a TV with HDMI-CEC. No idle close of
    /// non-media apps is reported for it; a paused player goes to the idle screen after about
    /// 20 minutes (vishen/go-chromecast#141); it reports `isActiveInput`/`isStandBy`
    /// (chromecast-java-api-v2's firmware 1.18 fixture; pychromecast#50); it reboots daily
    /// between 3 and 4 pm local time while it runs DashCast (stestagg/dashcast#20).
    public static let chromecast = FieldProfile(
        name: "chromecast", pausedIdleTimeout: 20 * 60, idleResetBy: .anyMessage,
        launch: Launch(readyAfter: 1), reportsCEC: true,
        dailyReboot: DailyReboot(windowStart: 15 * 3600, windowLength: 3600, downFor: 60)
    )

    /// A Nest Hub before the Fuchsia update: closes a non-media app (DashCast, a dashboard)
    /// after about 10 minutes (catt#260, catt#288, home-assistant/frontend#5729); only media
    /// resets the timer (home-assistant/core#53882); a Home Assistant dashboard takes over 10 s
    /// to connect (pychromecast PR#770); CANCELLED launches are routine while DashCast runs
    /// (pychromecast PR#803); the photo frame covers a running page (home-assistant/core#136101;
    /// after how long is not reported: 10 minutes, as on Google TV, is our default); no CEC
    /// fields (home-assistant/core#112644).
    public static let nestHub = FieldProfile(
        name: "nest-hub", appIdleTimeout: 600, pausedIdleTimeout: 20 * 60, idleResetBy: .media,
        launch: Launch(readyAfter: 2.1, pageAppExtra: 10, cancelledProbability: 0.05),
        ambient: Ambient(after: 600, coversApp: true), reportsCEC: false, launchTakesInput: false
    )

    /// A Nest Hub after the Fuchsia update: the idle close comes after about 30 s (catt#353,
    /// stestagg/dashcast#14); otherwise as ``nestHub``.
    public static let nestHubFuchsia: FieldProfile = {
        var profile = nestHub
        profile.name = "nest-hub-fuchsia"
        profile.appIdleTimeout = 30
        return profile
    }()

    /// Chromecast with Google TV: closes a page app sooner than a Nest Hub; a 4-minute refresh
    /// did not keep it (JohnStrunk/wahoo-results#229, PR#231; the figure is not reported: 180 s is
    /// our default); the ambient screensaver covers a cast dashboard after 10 minutes while the
    /// app runs (b0mbays/continuously_casting_dashboards#151); no CEC fields while a native
    /// app runs (home-assistant/core#80670).
    public static let chromecastGoogleTV = FieldProfile(
        name: "chromecast-google-tv", appIdleTimeout: 180, pausedIdleTimeout: 20 * 60, idleResetBy: .media,
        launch: Launch(readyAfter: 2), ambient: Ambient(after: 600, coversApp: true), reportsCEC: false
    )

    /// A TV with Cast built in: no CEC fields (vincentbernat/dashkiosk#102); custom-channel apps
    /// closed after about 5 minutes (PierfrancescoSoffritti/chromecast-youtube-player#10).
    public static let castTV = FieldProfile(
        name: "cast-tv", appIdleTimeout: 300, pausedIdleTimeout: 20 * 60, idleResetBy: .media,
        launch: Launch(readyAfter: 2), reportsCEC: false, launchTakesInput: false
    )

    /// A speaker (Google Home, Nest Mini, Chromecast Audio): no screen, no CEC fields
    /// (home-assistant/core#80670); custom-channel apps closed after about 5 minutes
    /// (PierfrancescoSoffritti/chromecast-youtube-player#10).
    public static let speaker = FieldProfile(
        name: "speaker", appIdleTimeout: 300, idleResetBy: .media, launch: Launch(readyAfter: 1), reportsCEC: false,
        launchTakesInput: false
    )

    /// Every built-in profile, by name.
    public static let builtIn: [FieldProfile] = [ideal, chromecast, nestHub, nestHubFuchsia, chromecastGoogleTV, castTV, speaker]

    public static func named(_ name: String) -> FieldProfile? { builtIn.first { $0.name == name } }

    /// The field profile of a model name as devices announce it (`md`).
    public static func forModel(_ model: String, isVideoDevice: Bool) -> FieldProfile {
        let lower = model.lowercased()
        if lower.contains("google tv") { return chromecastGoogleTV }
        if lower.contains("hub") { return nestHub }
        if lower.contains("tv") || lower.contains("bravia") || lower.contains("shield") { return castTV }
        if !isVideoDevice || lower.contains("audio") || lower.contains("mini") || lower.contains("home") { return speaker }
        return chromecast
    }
}
