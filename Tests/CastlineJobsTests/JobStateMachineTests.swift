import CastlineConfig
import CastlineJobs
import Testing

@Suite struct JobStateMachineTests {
    func job(_ configure: (inout JobEntry) -> Void = { _ in }) -> JobEntry {
        var job = JobEntry(name: "lobby", devices: ["Lobby*"], media: MediaEntry(url: "http://127.0.0.1/d.m3u8"))
        job.retryDelay = 2
        job.checkInterval = 30
        configure(&job)
        return job
    }

    func playing(_ job: JobEntry) -> JobStateMachine {
        var machine = JobStateMachine(job: job)
        #expect(machine.handle(.deviceFound(current: nil), now: 0) == [.cast(reason: "device found")])
        #expect(machine.handle(.castSucceeded, now: 1) == [])
        #expect(machine.state == .playing)
        return machine
    }

    static let ours = JobStateMachine.MediaObservation(playerState: "PLAYING", isOurs: true)

    @Test func castsWhenTheDeviceIsFoundAndChecksWhilePlaying() {
        var machine = playing(job())
        #expect(machine.handle(.media(Self.ours), now: 2) == [])
        #expect(machine.handle(.tick, now: 20) == [])
        #expect(machine.handle(.tick, now: 31) == [.checkStatus])
        #expect(machine.handle(.tick, now: 40) == [])
        #expect(machine.casts == 1)
    }

    @Test func failedCastsBackOffDoublingUpTo16Times() {
        var machine = JobStateMachine(job: job())
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        var now = 0.0
        var waits: [Double] = []
        for _ in 0..<7 {
            _ = machine.handle(.castFailed("refused"), now: now)
            guard case .backingOff(let until) = machine.state else { Issue.record("\(machine.state)"); return }
            waits.append(until - now)
            #expect(machine.handle(.tick, now: until - 0.1) == [])
            now = until
            #expect(machine.handle(.tick, now: now) == [.cast(reason: "retry \(machine.failures)")])
        }
        #expect(waits == [2, 4, 8, 16, 32, 32, 32])
        _ = machine.handle(.castSucceeded, now: now)
        #expect(machine.failures == 0)
    }

    @Test func idleMediaIsCastAgainOnlyWhenRecastOnSaysIdle() {
        var machine = playing(job())
        let finished = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: true)
        #expect(machine.handle(.media(finished), now: 5) == [.cast(reason: "the media went idle (FINISHED)")])

        var strict = playing(job { $0.recastOn = [.reboot] })
        #expect(strict.handle(.media(finished), now: 5) == [])
        #expect(strict.state == .stopped(reason: "the media went idle (FINISHED), and recast_on has no \"idle\""))
        #expect(strict.handle(.tick, now: 100) == [])
    }

    @Test func aRebootedDeviceIsCastAgainAtOnceAndAfterAFailureWithTheBackoff() {
        var machine = playing(job())
        #expect(machine.handle(.sessionEnded(.lost("session gone")), now: 10) == [.cast(reason: "the device is back without the app (session gone)")])
        #expect(machine.lastCause == .deviceBack)
        #expect(machine.handle(.castFailed("refused"), now: 11) == [])
        #expect(machine.state == .backingOff(until: 13))
        #expect(machine.handle(.tick, now: 13) == [.cast(reason: "retry 1")])
        var noReboot = playing(job { $0.recastOn = [.idle] })
        _ = noReboot.handle(.sessionEnded(.lost("session gone")), now: 10)
        #expect(noReboot.state == .stopped(reason: "session lost (session gone), and recast_on has no \"reboot\""))
    }

    @Test func lostAndFoundDependsOnTheFoundTrigger() {
        var machine = playing(job())
        #expect(machine.handle(.deviceLost, now: 5) == [.endSession])
        #expect(machine.state == .waitingForDevice)
        #expect(machine.handle(.deviceFound(current: nil), now: 9) == [.cast(reason: "device found again")])
        var noFound = playing(job { $0.recastOn = [.idle, .reboot] })
        _ = noFound.handle(.deviceLost, now: 5)
        #expect(noFound.handle(.deviceFound(current: nil), now: 9) == [])
        #expect(noFound.state == .stopped(reason: "found again, but recast_on has no \"found\""))
    }

    @Test func takeoverYieldsUntilTheOtherSenderIsDoneOrReclaimAfter() {
        var machine = playing(job { $0.reclaimAfter = 100 })
        #expect(machine.handle(.sessionEnded(.appReplaced(by: "YouTube")), now: 10) == [])
        #expect(machine.state == .yielding(since: 10))
        #expect(machine.handle(.tick, now: 41) == [])
        #expect(machine.handle(.media(Self.theirs), now: 41) == [], "still busy")
        #expect(machine.handle(.tick, now: 110) == [.cast(reason: "reclaimed after 100 s")])

        var waiting = playing(job())
        _ = waiting.handle(.media(Self.theirs), now: 10)
        #expect(waiting.state == .yielding(since: 10))
        let interrupted = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "INTERRUPTED", isOurs: false)
        #expect(waiting.handle(.media(interrupted), now: 44) == [], "another load on its way")
        let finished = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: false)
        #expect(waiting.handle(.media(finished), now: 45) == [.cast(reason: "the other sender's media ended (FINISHED)")])
        var stopped = playing(job())
        _ = stopped.handle(.media(Self.theirs), now: 10)
        #expect(stopped.handle(.media(nil), now: 12) == [], "its app runs without a media session: still its screen")
        #expect(stopped.handle(.media(.noApp), now: 13) == [.cast(reason: "the other sender's app is gone")])
        var appGone = playing(job())
        _ = appGone.handle(.media(Self.theirs), now: 10)
        #expect(appGone.handle(.sessionEnded(.appReplaced(by: "233637DE")), now: 11) == [])
        #expect(appGone.handle(.sessionEnded(.appStopped), now: 12) == [.cast(reason: "the other sender's app stopped")])
    }

    static let theirs = JobStateMachine.MediaObservation(playerState: "PLAYING", isOurs: false)
    static let command = JobStateMachine.MediaObservation(playerState: "PLAYING", isOurs: false, heldByCommand: true)

    @Test func atStartAJobYieldsToAnotherSendersMediaAndKeepsItsOwn() {
        var yielding = JobStateMachine(job: job())
        #expect(yielding.handle(.deviceFound(current: Self.theirs), now: 0) == [])
        #expect(yielding.state == .yielding(since: 0))
        #expect(yielding.casts == 0)
        var reclaiming = JobStateMachine(job: job { $0.takeover = .reclaim })
        #expect(reclaiming.handle(.deviceFound(current: Self.theirs), now: 0)
                == [.cast(reason: "another sender's media plays there; takeover: reclaim")])
        var restarted = JobStateMachine(job: job())
        #expect(restarted.handle(.deviceFound(current: Self.ours), now: 0) == [], "our media still plays: no recast")
        #expect(restarted.state == .playing)
        var idle = JobStateMachine(job: job())
        let finished = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: false)
        #expect(idle.handle(.deviceFound(current: finished), now: 0) == [.cast(reason: "device found")])
    }

    @Test func aCommandsCastIsAlwaysYieldedToUntilItEnds() {
        var machine = playing(job { $0.takeover = .reclaim; $0.reclaimAfter = 5 })
        #expect(machine.handle(.media(Self.command), now: 10) == [], "reclaim does not fight a command's cast")
        #expect(machine.state == .yielding(since: 10))
        #expect(machine.handle(.tick, now: 60) == [], "reclaim_after does not cut a command's cast short")
        // A second command's LOAD interrupts the first: still held, no cast.
        let interrupted = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "INTERRUPTED", isOurs: false, heldByCommand: true)
        #expect(machine.handle(.media(interrupted), now: 61) == [])
        let ended = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: false, heldByCommand: true)
        #expect(machine.handle(.media(ended), now: 62) == [], "held until the hub releases it")
        let released = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "FINISHED", isOurs: false)
        #expect(machine.handle(.media(released), now: 63) == [.cast(reason: "the other sender's media ended (FINISHED)")])
    }

    /// What pychromecast's play_media looks like to the job: IDLE without a reason, LOADING,
    /// BUFFERING, PLAYING. None of it is an ending; the FINISHED after it played is.
    @Test func yieldSurvivesTheTransitionalStatusesOfAnotherSendersLoad() {
        var machine = playing(job())
        let loadStarts = JobStateMachine.MediaObservation(playerState: "IDLE", isOurs: false)
        #expect(machine.handle(.media(loadStarts), now: 10) == [])
        #expect(machine.state == .yielding(since: 10))
        for (i, state) in ["IDLE", "LOADING", "BUFFERING", "PLAYING", "PAUSED", "BUFFERING", "PLAYING"].enumerated() {
            let step = JobStateMachine.MediaObservation(playerState: state, isOurs: false)
            #expect(machine.handle(.media(step), now: 10 + Double(i) * 0.01) == [], "\(state) is not an ending")
        }
        #expect(machine.handle(.media(JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "INTERRUPTED", isOurs: false)), now: 11) == [],
                "INTERRUPTED: its session replaced by another load")
        #expect(machine.state == .yielding(since: 10))
        let cancelled = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "CANCELLED", isOurs: false)
        #expect(machine.handle(.media(cancelled), now: 12) == [.cast(reason: "the other sender's media ended (CANCELLED)")])
    }

    @Test func aFinalIdleBeforeAnythingPlayedEndsTheYieldOnlyWhenItIsAnError() {
        var machine = playing(job())
        let loadStarts = JobStateMachine.MediaObservation(playerState: "LOADING", isOurs: false)
        _ = machine.handle(.media(loadStarts), now: 10)
        let cancelled = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "CANCELLED", isOurs: false)
        #expect(machine.handle(.media(cancelled), now: 11) == [], "a stale CANCELLED of the load before: nothing played yet")
        let failed = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "ERROR", isOurs: false)
        #expect(machine.handle(.media(failed), now: 12) == [.cast(reason: "the other sender's media ended (ERROR)")])
    }

    @Test func aConfigChangeWhileYieldingWaitsForTheScreen() {
        var machine = playing(job { $0.reclaimAfter = 100 })
        _ = machine.handle(.media(Self.theirs), now: 10)
        #expect(machine.handle(.switched("the config changed the job's media"), now: 20) == [])
        #expect(machine.state == .yielding(since: 10), "a SIGHUP does not take a yielding TV back")
        #expect(machine.handle(.tick, now: 109) == [])
        #expect(machine.handle(.tick, now: 110) == [.cast(reason: "reclaimed after 100 s")])
    }

    @Test func theJobsOwnOutOfDateContentIsReplacedNotYieldedTo() {
        let before = JobStateMachine.MediaObservation(playerState: "PLAYING", isOurs: false, ownedByJob: true)
        var restarted = JobStateMachine(job: job())
        #expect(restarted.handle(.deviceFound(current: before), now: 0) == [.cast(reason: "the job's content changed")])
        var running = playing(job())
        #expect(running.handle(.media(before), now: 3) == [], "the old content on its way out")
        #expect(running.state == .playing)
    }

    /// An announcement hands the device back: the job casts at once, once, whatever its takeover.
    @Test func aHandBackCastsAtOnceFromAYieldToACommand() {
        var machine = playing(job { $0.reclaimAfter = 600 })
        _ = machine.handle(.media(Self.command), now: 10)
        #expect(machine.state == .yielding(since: 10))
        #expect(machine.handle(.handBack("the announcement ended"), now: 13) == [.cast(reason: "the announcement ended")])
        #expect(machine.handle(.handBack("again"), now: 13.1) == [], "already casting")
        var waiting = JobStateMachine(job: job())
        #expect(waiting.handle(.handBack("the announcement ended"), now: 1) == [], "no device yet: nothing to give back")
    }

    @Test func noAppWhilePlayingIsAnIdleDevice() {
        var machine = playing(job())
        #expect(machine.handle(.media(.noApp), now: 5) == [.cast(reason: "no app runs on the device")])
    }

    @Test func takeoverWithReclaimCastsAtOnce() {
        var machine = playing(job { $0.takeover = .reclaim })
        let interrupted = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "INTERRUPTED", isOurs: true)
        #expect(machine.handle(.media(interrupted), now: 3) == [.cast(reason: "our media was interrupted by another load; takeover: reclaim")])
    }

    /// The first status after a command's LOAD may be our own media INTERRUPTED (before the
    /// command's media shows): held by the command, so yielded to even with reclaim.
    @Test func ourMediaInterruptedByACommandIsYieldedTo() {
        var machine = playing(job { $0.takeover = .reclaim })
        let interrupted = JobStateMachine.MediaObservation(playerState: "IDLE", idleReason: "INTERRUPTED", isOurs: true, heldByCommand: true)
        #expect(machine.handle(.media(interrupted), now: 3) == [])
        #expect(machine.state == .yielding(since: 3))
        #expect(machine.handle(.media(Self.command), now: 4) == [], "the command's media plays: still yielding")
        #expect(machine.handle(.tick, now: 600) == [], "no reclaim while the command's cast is held")
    }

    @Test func aStoppedAppCountsAsIdle() {
        var machine = playing(job())
        #expect(machine.handle(.sessionEnded(.appStopped), now: 3) == [.cast(reason: "the receiver app was stopped")])
        #expect(machine.handle(.sessionEnded(.requested), now: 4) == [])
        #expect(machine.state == .casting)
    }
}

/// A speaker group's cast that includes the device: another sender's cast (yield or reclaim),
/// never an idle device to cast to again at once.
@Suite struct JobStateMachineGroupTests {
    static func machine(_ takeover: String) throws -> JobStateMachine {
        var entry = JobEntry(name: "tv", devices: ["TV"], media: MediaEntry(url: "http://media.invalid/a.mp4"))
        entry.takeover = takeover == "reclaim" ? .reclaim : .yield
        var machine = JobStateMachine(job: entry)
        _ = machine.handle(.deviceFound(current: nil), now: 0)
        _ = machine.handle(.castSucceeded, now: 1)
        return machine
    }

    @Test func yieldWaitsOutTheGroupAndCastsWhenItStops() throws {
        var machine = try Self.machine("yield")
        #expect(machine.state == .playing)
        #expect(machine.handle(.groupPlayback("Downstairs"), now: 2).isEmpty)
        #expect(machine.state == .yielding(since: 2))
        #expect(machine.handle(.sessionEnded(.appStopped), now: 2.1).isEmpty, "the group stopped our app: still yielding")
        #expect(machine.handle(.media(nil), now: 2.2).isEmpty, "no media of ours: the group plays, not an idle device")
        #expect(machine.state == .yielding(since: 2))
        let actions = machine.handle(.groupPlayback(nil), now: 30)
        #expect(actions.count == 1 && machine.state == .casting)
        #expect(machine.lastReason.contains("Downstairs stopped"))
    }

    @Test func appStoppedBeforeTheGroupNewsIsStillATakeover() throws {
        var machine = try Self.machine("yield")
        _ = machine.handle(.groupPlayback("Downstairs"), now: 2)
        var other = try Self.machine("yield")
        // Without a group the stop of our app is the media going idle: cast again.
        #expect(other.handle(.sessionEnded(.appStopped), now: 2).count == 1)
        #expect(machine.heldByGroup == "Downstairs")
    }

    @Test func reclaimCastsAtOnce() throws {
        var machine = try Self.machine("reclaim")
        let actions = machine.handle(.groupPlayback("Downstairs"), now: 2)
        #expect(actions.count == 1 && machine.state == .casting)
        #expect(machine.lastReason.contains("takeover: reclaim"))
    }
}
