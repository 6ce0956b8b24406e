import CastBackoff
import CastlineConfig

/// What one job does on one device, as a pure state machine: inputs are discovery, link and
/// media observations plus clock ticks; outputs are actions for ``JobDriver``. No sockets, no
/// clock of its own (`now` comes with every input), so tests drive it directly. Another sender's
/// media is an observed fact the job's takeover policy reacts to (a command's cast through the
/// hub always makes it yield), never something it overwrites by accident.
package struct JobStateMachine: Sendable {
    package enum State: Sendable, Equatable, CustomStringConvertible {
        /// The device is not (or no longer) discovered.
        case waitingForDevice
        /// A cast is under way.
        case casting
        /// Our media plays (or is paused/buffering) on the device.
        case playing
        /// Another sender took the device over; we wait for it to go idle (or `reclaim_after`).
        case yielding(since: Double)
        /// A cast failed or the device dropped; the next attempt is at `until`.
        case backingOff(until: Double)
        /// The job's triggers say not to cast again (e.g. `recast_on` without `idle`).
        case stopped(reason: String)

        package var description: String {
            switch self {
            case .waitingForDevice: return "waiting-for-device"
            case .casting: return "casting"
            case .playing: return "playing"
            case .yielding: return "yielding"
            case .backingOff: return "backing-off"
            case .stopped: return "stopped"
            }
        }
    }

    /// How a session ended, as far as the job cares.
    package enum SessionEnd: Sendable, Equatable {
        /// The app was stopped (on the device or by another sender): the device is idle.
        case appStopped
        /// Another sender launched another app: a takeover.
        case appReplaced(by: String)
        /// The app session is gone after a reconnect (the device rebooted) or reconnecting gave up.
        case lost(String)
        /// We ended it.
        case requested
    }

    /// A media status, reduced to what the job needs.
    package struct MediaObservation: Sendable, Equatable {
        /// The player's state, or `APP` (another app runs that reports no media, a web page say),
        /// or `NO_APP` (no app runs at all: the device is free).
        package var playerState: String
        package var idleReason: String?
        /// True when the content is the job's (contentId or contentUrl equal to the job's URL).
        package var isOurs: Bool
        /// Cast by a command through the hub (`castline cast`, the API): the job yields to it
        /// whatever its takeover policy, and takes over again when it ends.
        package var heldByCommand: Bool
        /// castline cast it for this job, though it is not the job's content now (the config
        /// changed it): the job's own, out of date, to replace, never to yield to.
        package var ownedByJob: Bool

        package init(playerState: String, idleReason: String? = nil, isOurs: Bool, heldByCommand: Bool = false, ownedByJob: Bool = false) {
            self.playerState = playerState
            self.idleReason = idleReason
            self.isOurs = isOurs
            self.heldByCommand = heldByCommand
            self.ownedByJob = ownedByJob
        }

        /// No app runs: the device is free.
        package static let noApp = MediaObservation(playerState: "NO_APP", isOurs: false)

        /// Loading, buffering, playing or paused: something occupies the device.
        /// (`APP`: another app runs that reports no media, a web page say.)
        package var isActive: Bool { ["PLAYING", "PAUSED", "BUFFERING", "LOADING", "APP"].contains(playerState) }

        /// Media is on the screen now (playing, paused, buffering): what "has played" means.
        package var hasPlayed: Bool { ["PLAYING", "PAUSED", "BUFFERING"].contains(playerState) }

        /// An IDLE that ends a media session: FINISHED, CANCELLED, ERROR (INTERRUPTED is another
        /// load on its way, an IDLE without a reason a load in progress).
        package var isFinalIdle: Bool {
            playerState == "IDLE" && ["FINISHED", "CANCELLED", "ERROR"].contains(idleReason ?? "")
        }
    }

    package enum Input: Sendable, Equatable {
        /// The device is there, with what it plays now (nil: nothing, or not known).
        case deviceFound(current: MediaObservation?)
        case deviceLost
        case castSucceeded
        case castFailed(String)
        case media(MediaObservation?)
        case sessionEnded(SessionEnd)
        case tick
        /// What the job shows changed (a schedule's switch): cast the new content at once.
        case switched(String)
        /// The device plays a speaker group's media now (the group's name), or no longer (nil):
        /// a group cast that includes the device is another sender's cast.
        case groupPlayback(String?)
        /// A command that interrupted the job (an announcement) gives the device back: the job
        /// shows its content again at once, from where it was.
        case handBack(String)
        /// The device answered the LAUNCH `CANCELLED` (a launch of its own got in the way, as
        /// Nest Hubs do while DashCast runs): retried once at once, then as any failure.
        case launchCancelled(String)
        /// What the screen shows (``ScreenReading``): with `screen_off: wake`, a screen that does
        /// not show the job's app (covered, off, another input) gets the app launched again.
        case screen(ScreenReading?)
    }

    /// Why a cast started, as a label for counting (`castline_job_casts_total`): every relaunch
    /// is explained by one.
    package enum CastCause: String, Sendable, CaseIterable {
        /// The device was found for the first time.
        case first
        /// The device came back (found again, or reconnected after a reboot or a drop).
        case deviceBack = "device-back"
        /// The job's app was closed (by the device's idle timer, or a stop).
        case appClosed = "app-closed"
        /// The job's media ended or failed.
        case mediaEnded = "media-ended"
        /// A failed cast (a hung launch, a refusal) is retried after the backoff.
        case retry
        /// The device cancelled the launch; retried once at once.
        case launchCancelled = "launch-cancelled"
        /// The screen did not show the app (`screen_off: wake`).
        case screenOff = "screen-off"
        /// What the job shows changed (a schedule's switch, the config).
        case contentChanged = "content-changed"
        /// A command (an announcement) gave the device back.
        case handBack = "hand-back"
        /// Another sender's cast ended.
        case otherSenderDone = "other-sender-done"
        /// The job took the device back from another sender (`takeover: reclaim`, `reclaim_after`).
        case reclaim
    }

    package enum Action: Sendable, Equatable {
        case cast(reason: String)
        case endSession
        /// Ask the device for the media status (periodic check while playing).
        case checkStatus
        /// Send a site job's page again, so the receiver does not stop an app that shows no media.
        case keepAlive
    }

    package let job: JobEntry
    package private(set) var state: State = .waitingForDevice
    package var isYielding: Bool {
        if case .yielding = state { return true }
        return false
    }
    /// Consecutive failed casts (for the backoff); reset when a cast succeeds.
    package private(set) var failures = 0
    /// Casts started, for the status line and tests.
    package private(set) var casts = 0
    /// Why the last cast was started.
    package private(set) var lastReason = ""
    package private(set) var lastCause = CastCause.first
    /// The last LAUNCH was cancelled and retried at once (the next cancel backs off).
    private var retriedCancel = false
    /// Wakes of a screen that did not show the app (`screen_off: wake`), and when the next may
    /// come: a screen that stays dark is woken with the retry backoff, not in a loop.
    package private(set) var wakes = 0
    private var nextWake = 0.0
    /// Why the screen does not show the app, as last read (nil: it does, or it is not known).
    private var darkScreen: ScreenReading.Reason?
    private var seenBefore = false
    private var lastCheck = 0.0
    /// When the site job's page was last sent (a cast or a keep-alive).
    private var lastSent = 0.0
    /// Keep-alives sent, for the status and tests.
    package private(set) var keepAlives = 0
    /// While yielding: to a command's cast (no `reclaim_after`).
    private var heldByCommand = false
    /// The speaker group whose media the device plays now (it took the device over).
    package private(set) var heldByGroup: String?
    /// While yielding: the other sender's media has been seen on the screen (its final IDLE
    /// then ends the yield; before that, a final IDLE is its load failing).
    private var otherPlayed = false

    /// Seconds between a site job's keep-alives on this device (nil: not a site job).
    package let keepAliveInterval: Double?

    /// `idleTimeout`: the device's idle timeout for apps without media, when the job does not
    /// give one (by the device's model). `keepAlive`: false where nothing castline sends resets
    /// the device's idle timer (only media does): no keep-alive, the page is shown again as soon
    /// as the device closes it.
    package init(job: JobEntry, idleTimeout: Double? = nil, keepAlive: Bool = true) {
        self.job = job
        keepAliveInterval = keepAlive ? job.site.map {
            SiteEntry.keepAliveInterval(idleTimeout: $0.idleTimeout ?? idleTimeout ?? SiteEntry.defaultIdleTimeout)
        } : nil
    }

    /// Seconds to wait after `failures` consecutive failures: `retry_delay` doubling up to 16×.
    package func backoff(after failures: Int) -> Double {
        Backoff(initial: job.retryDelay, multiplier: 2, maximum: job.retryDelay * 16).delay(attempt: failures)
    }

    package mutating func handle(_ input: Input, now: Double) -> [Action] {
        switch (input, state) {
        case (.deviceFound(let current), .waitingForDevice):
            defer { seenBefore = true }
            if let current, current.isActive {
                // Our media still plays (castline restarted, the device came back): keep it.
                if current.isOurs {
                    state = .playing
                    lastCheck = now
                    // A site job's app runs, but which page it shows is not reported: send ours.
                    return job.site != nil ? keepAlive(now) : []
                }
                // The job's own cast of content the config has since changed: replace it.
                if current.ownedByJob { return startCast("the job's content changed", .contentChanged, now: now) }
                return takeover("another sender's media plays there", now: now, held: current.heldByCommand, played: current.hasPlayed)
            }
            if seenBefore && !job.recastOn.contains(.found) {
                state = .stopped(reason: "found again, but recast_on has no \"found\"")
                return []
            }
            return startCast(seenBefore ? "device found again" : "device found", seenBefore ? .deviceBack : .first, now: now)
        case (.deviceFound, _):
            return []
        case (.deviceLost, .waitingForDevice):
            return []
        case (.deviceLost, _):
            state = .waitingForDevice
            return [.endSession]

        case (.castSucceeded, .casting):
            failures = 0
            retriedCancel = false
            state = .playing
            lastCheck = now
            lastSent = now
            return []
        case (.castFailed, .casting):
            failures += 1
            state = .backingOff(until: now + backoff(after: failures))
            return []
        case (.launchCancelled(let why), .casting):
            guard retriedCancel else {
                retriedCancel = true
                return startCast("the launch was cancelled (\(why)): once more at once", .launchCancelled, now: now)
            }
            retriedCancel = false
            failures += 1
            state = .backingOff(until: now + backoff(after: failures))
            return []
        case (.castSucceeded, _), (.castFailed, _), (.launchCancelled, _):
            return []

        case (.screen(let reading), _):
            // Covered, off or elsewhere (no app at all is the app's own loss, recast anyway).
            darkScreen = reading.flatMap { $0.visible == false && $0.reason != .idleScreen ? $0.reason : nil }
            if reading?.visible == true { wakes = 0 }
            guard case .playing = state else { return [] }
            return wakeIfDark(now)

        case (.media(let observation), .playing):
            return mediaChanged(observation, now: now)
        case (.media, .yielding) where heldByGroup != nil:
            // The group plays on the device: its end (groupPlayback nil) frees it.
            return []
        case (.media(let observation), .yielding):
            // A command's cast is waited out until the hub says it is over (it is no longer held).
            if observation?.heldByCommand == true {
                if observation?.hasPlayed == true { otherPlayed = true }
                return []
            }
            // The other sender's app runs without a media session: still its screen.
            guard let observation else { return [] }
            if observation.playerState == "NO_APP" { return startCast("the other sender's app is gone", .otherSenderDone, now: now) }
            if observation.isOurs && observation.isActive {
                state = .playing
                lastCheck = now
                return []
            }
            if observation.hasPlayed {
                otherPlayed = true
                return []
            }
            // An ending is a final IDLE after its media played, or ERROR (its load failed: nothing
            // shows). An IDLE without a reason, LOADING and INTERRUPTED are a load in progress.
            if observation.isFinalIdle, otherPlayed || observation.idleReason == "ERROR" {
                return startCast("the other sender's media ended (\(observation.idleReason ?? ""))", .otherSenderDone, now: now)
            }
            return []
        case (.media, _):
            return []

        case (.groupPlayback(let name?), .playing), (.groupPlayback(let name?), .casting):
            heldByGroup = name
            return takeover("speaker group \(name) casts to the device (it is a member)", now: now)
        case (.groupPlayback(nil), .yielding) where heldByGroup != nil:
            let name = heldByGroup ?? ""
            heldByGroup = nil
            return startCast("speaker group \(name) stopped playing on the device", .otherSenderDone, now: now)
        case (.groupPlayback(let name), _):
            heldByGroup = name
            return []
        case (.sessionEnded(.appStopped), .playing) where heldByGroup != nil,
             (.sessionEnded(.appStopped), .casting) where heldByGroup != nil:
            // The group's cast stopped our app: another sender's cast, not the media ending.
            return takeover("speaker group \(heldByGroup ?? "") took the device over", now: now)
        case (.sessionEnded(.appStopped), .yielding) where heldByGroup != nil:
            return []

        case (.sessionEnded(let end), .playing), (.sessionEnded(let end), .casting):
            switch end {
            case .requested:
                return []
            case .appStopped:
                return idle("the receiver app was stopped", .appClosed, now: now)
            case .appReplaced(let other):
                return takeover("another sender launched app \(other)", now: now)
            case .lost(let why):
                guard job.recastOn.contains(.reboot) else {
                    state = .stopped(reason: "session lost (\(why)), and recast_on has no \"reboot\"")
                    return []
                }
                // The device is back without the app (it rebooted): cast at once; a cast that
                // fails from here backs off as any failure.
                guard failures > 0 else { return startCast("the device is back without the app (\(why))", .deviceBack, now: now) }
                failures += 1
                state = .backingOff(until: now + backoff(after: failures))
                return []
            }
        case (.sessionEnded(.appStopped), .yielding):
            // The app the other sender's media played in stopped: the device is free.
            return startCast("the other sender's app stopped", .otherSenderDone, now: now)
        case (.sessionEnded, _):
            return []

        case (.tick, .backingOff(let until)):
            return now >= until ? startCast(failures > 0 ? "retry \(failures)" : "retry", .retry, now: now) : []
        case (.tick, .playing):
            // A screen still dark after a wake (the TV did not take the input, the launch failed)
            // is woken again, with the backoff.
            let wake = wakeIfDark(now)
            if !wake.isEmpty { return wake }
            if job.site != nil {
                // The receiver reports the app, not the page: only the keep-alive is due (none
                // where nothing castline sends resets the device's idle timer).
                guard let interval = keepAliveInterval else { return [] }
                return now - lastSent >= interval ? keepAlive(now) : []
            }
            guard now - lastCheck >= job.checkInterval else { return [] }
            lastCheck = now
            return [.checkStatus]
        case (.tick, .yielding(let since)):
            if !heldByCommand, let after = job.reclaimAfter, now - since >= after {
                return startCast("reclaimed after \(Int(after)) s", .reclaim, now: now)
            }
            return []
        case (.tick, _):
            return []

        case (.handBack(let why), .yielding) where heldByGroup == nil:
            heldByCommand = false
            return startCast(why, .handBack, now: now)
        case (.handBack(let why), .playing):
            return startCast(why, .handBack, now: now)
        case (.handBack, _):
            return []

        case (.switched(let why), .yielding):
            // Another sender has the screen: the new content waits until it is free.
            lastReason = why
            return []
        case (.switched(let why), _):
            return startCast(why, .contentChanged, now: now)
        }
    }

    /// With `screen_off: wake`, a LAUNCH for a screen that does not show the app, no more often
    /// than the retry backoff while it stays dark.
    private mutating func wakeIfDark(_ now: Double) -> [Action] {
        guard job.screenOff == .wake, let reason = darkScreen, now >= nextWake else { return [] }
        wakes += 1
        nextWake = now + backoff(after: wakes)
        return startCast("the screen shows no app (\(reason.rawValue)); screen_off: wake", .screenOff, now: now)
    }

    private mutating func keepAlive(_ now: Double) -> [Action] {
        lastSent = now
        keepAlives += 1
        return [.keepAlive]
    }

    private mutating func startCast(_ reason: String, _ cause: CastCause, now: Double) -> [Action] {
        state = .casting
        casts += 1
        lastReason = reason
        lastCause = cause
        return [.cast(reason: reason)]
    }

    private mutating func mediaChanged(_ observation: MediaObservation?, now: Double) -> [Action] {
        guard let observation else {
            // No media session at all in our app: it ended without an IDLE status we saw.
            return idle("no media is loaded", .appClosed, now: now)
        }
        if observation.playerState == "NO_APP" { return idle("no app runs on the device", .appClosed, now: now) }
        if !observation.isOurs {
            if observation.ownedByJob { return [] }   // the job's own previous content, on its way out
            return takeover(observation.heldByCommand ? "a command cast other media" : "another sender loaded other media", now: now,
                            held: observation.heldByCommand, played: observation.hasPlayed)
        }
        guard observation.playerState == "IDLE" else { return [] }
        switch observation.idleReason {
        case "INTERRUPTED":
            // A command's load (claimed before it went out) is yielded to even with reclaim.
            return takeover(observation.heldByCommand ? "a command's cast interrupted our media" : "our media was interrupted by another load",
                            now: now, held: observation.heldByCommand)
        case nil:
            return []
        case let reason?:
            return idle("the media went idle (\(reason))", .mediaEnded, now: now)
        }
    }

    private mutating func idle(_ why: String, _ cause: CastCause, now: Double) -> [Action] {
        guard job.recastOn.contains(.idle) else {
            state = .stopped(reason: "\(why), and recast_on has no \"idle\"")
            return []
        }
        return startCast(why, cause, now: now)
    }

    /// `held`: a command's cast (always yielded to, and `reclaim_after` waits for its end).
    /// `played`: the other sender's media is already on the screen.
    private mutating func takeover(_ why: String, now: Double, held: Bool = false, played: Bool = false) -> [Action] {
        if job.takeover == .reclaim, !held { return startCast("\(why); takeover: reclaim", .reclaim, now: now) }
        state = .yielding(since: now)
        heldByCommand = held
        otherPlayed = played
        lastCheck = now
        lastReason = why
        return []
    }
}
