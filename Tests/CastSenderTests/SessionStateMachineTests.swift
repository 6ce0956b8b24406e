@testable import CastSender
import CastTransport
import Testing

/// The session life cycle without sockets: every input in every relevant state.
@Suite("SessionStateMachine")
struct SessionStateMachineTests {
    static let lost = SuspendReason.connectionLost(.remoteClosed)

    static func events(_ outputs: [SessionStateMachine.Output]) -> [String] {
        outputs.compactMap { if case .event(let event) = $0 { return event.name }; return nil }
    }

    static func effects(_ outputs: [SessionStateMachine.Output]) -> [SessionStateMachine.Effect] {
        outputs.compactMap { if case .effect(let effect) = $0 { return effect }; return nil }
    }

    static func connected(_ policy: ReconnectPolicy = ReconnectPolicy()) -> SessionStateMachine {
        var machine = SessionStateMachine(policy: policy)
        _ = machine.handle(.start)
        _ = machine.handle(.started)
        return machine
    }

    @Test("start: willStart + connect, then didStart + save; failure: close + didFailToStart")
    func start() {
        var machine = SessionStateMachine()
        let begin = machine.handle(.start)
        #expect(Self.events(begin) == ["willStart"])
        #expect(Self.effects(begin) == [.connect(resume: false)])
        #expect(machine.state == .connecting)
        let done = machine.handle(.started)
        #expect(Self.events(done) == ["didStart"])
        #expect(Self.effects(done) == [.saveResumeRecord])
        #expect(machine.state == .connected)

        var failing = SessionStateMachine()
        _ = failing.handle(.start)
        let error = CastSessionError.appNotRunning(appID: "CC1AD845")
        let failed = failing.handle(.startFailed(error))
        #expect(failed == [.effect(.close(stopApp: false)), .event(.didFailToStart(error))])
        #expect(failing.state == .failed(error))
    }

    @Test("a lost connection suspends, fails pending requests and schedules the first retry fast")
    func suspend() {
        var machine = Self.connected()
        let out = machine.handle(.connectionLost(Self.lost, jitter: 0))
        #expect(machine.state == .suspended(Self.lost))
        #expect(Self.events(out) == ["didSuspend"])
        #expect(Self.effects(out) == [.failPendingRequests("\(Self.lost)"), .scheduleRetry(after: 0.05, attempt: 1)])
    }

    @Test("retries: willResume only on the first, no new didSuspend between them, delays grow and stay capped")
    func retries() {
        var machine = Self.connected()
        _ = machine.handle(.connectionLost(Self.lost, jitter: 0))
        var delays: [Double] = []
        var events: [String] = []
        for attempt in 1...8 {
            let due = machine.handle(.retryDue)
            events += Self.events(due)
            #expect(machine.state == .resuming(attempt: attempt))
            let failed = machine.handle(.resumeFailed(.connectFailed(.connectFailed(endpoint: "x", reason: "refused")), retryable: true, jitter: 0))
            events += Self.events(failed)
            guard case .scheduleRetry(let delay, let next)? = Self.effects(failed).first else {
                Issue.record("no retry scheduled after attempt \(attempt)")
                return
            }
            #expect(next == attempt + 1)
            // Suspended for this attempt's failure, not for the first cause.
            #expect(machine.state == .suspended(.connectionLost(.error("reconnect failed: cannot connect to x: refused"))))
            #expect(!machine.state.description.contains("closed by the device"))
            delays.append(delay)
        }
        #expect(events == ["willResume"])
        #expect(delays == [0.1, 0.2, 0.4, 0.8, 0.8, 0.8, 0.8, 0.8])
        _ = machine.handle(.retryDue)
        let back = machine.handle(.resumed)
        #expect(Self.events(back) == ["didResume"])
        #expect(machine.state == .connected && machine.attempt == 0)
    }

    @Test("attempts run out: ended with reconnectGaveUp naming the last error; a gone app session ends at once")
    func giveUp() {
        var machine = Self.connected(ReconnectPolicy(maxAttempts: 2))
        _ = machine.handle(.connectionLost(Self.lost, jitter: 0.5))
        let refused = CastSessionError.connectFailed(.connectFailed(endpoint: "x", reason: "refused"))
        _ = machine.handle(.retryDue)
        _ = machine.handle(.resumeFailed(refused, retryable: true, jitter: 0.5))
        _ = machine.handle(.retryDue)
        let out = machine.handle(.resumeFailed(refused, retryable: true, jitter: 0.5))
        let expected = CastSessionError.reconnectGaveUp(attempts: 2, lastError: "\(refused)")
        #expect(machine.state == .ended(expected))
        #expect(Self.events(out) == ["willEnd", "didEnd"])
        #expect(Self.effects(out).contains(.deleteResumeRecord))

        var gone = Self.connected()
        _ = gone.handle(.connectionLost(Self.lost, jitter: 0))
        _ = gone.handle(.retryDue)
        let error = CastSessionError.sessionGone(appID: "CC1AD845", sessionID: "abc")
        _ = gone.handle(.resumeFailed(error, retryable: false, jitter: 0))
        #expect(gone.state == .ended(error))
    }

    @Test("reconnect policy .never: a lost connection ends the session with connectionLost")
    func never() {
        var machine = Self.connected(.never)
        let out = machine.handle(.connectionLost(.connectionLost(.heartbeatTimeout(silentFor: 10)), jitter: 0))
        #expect(machine.state == .ended(.connectionLost(.heartbeatTimeout(silentFor: 10))))
        #expect(Self.events(out) == ["willEnd", "didEnd"])
    }

    @Test("end: from connected stops or leaves the app; from suspended cancels the retry; while connecting cancels the start")
    func end() {
        var machine = Self.connected()
        let ending = machine.handle(.end(stopCasting: true))
        #expect(Self.events(ending) == ["willEnd"])
        #expect(Self.effects(ending) == [.close(stopApp: true)])
        let ended = machine.handle(.endFinished)
        #expect(Self.events(ended) == ["didEnd"])
        #expect(machine.state == .ended(nil))

        var suspended = Self.connected()
        _ = suspended.handle(.connectionLost(Self.lost, jitter: 0))
        let out = suspended.handle(.end(stopCasting: true))
        #expect(Self.effects(out) == [.cancelRetry, .close(stopApp: false)])

        var starting = SessionStateMachine()
        _ = starting.handle(.start)
        let cancelled = starting.handle(.end(stopCasting: false))
        #expect(Self.events(cancelled) == ["didFailToStart"])
        #expect(starting.state == .failed(.cancelled))
    }

    @Test("app gone while connected: failPending, close, willEnd, didEnd with the reason; transfer resumes in place")
    func appGone() {
        var machine = Self.connected()
        let moved = machine.handle(.transferred)
        #expect(moved == [.event(.didResume(transferred: true)), .effect(.saveResumeRecord)])
        let error = CastSessionError.appStopped(appID: "CC1AD845")
        let out = machine.handle(.appGone(error))
        #expect(Self.events(out) == ["willEnd", "didEnd"])
        #expect(out.contains(.event(.didEnd(error))))
        #expect(machine.state == .ended(error))
    }

    @Test("inputs that do not apply change nothing", arguments: [
        SessionStateMachine.Input.started, .retryDue, .resumed, .endFinished, .transferred,
        .connectionLost(SuspendReason.connectionLost(.local), jitter: 0),
    ])
    func ignored(input: SessionStateMachine.Input) {
        var idle = SessionStateMachine()
        #expect(idle.handle(input).isEmpty)
        #expect(idle.state == .idle)
        var ended = Self.connected()
        _ = ended.handle(.end(stopCasting: false))
        _ = ended.handle(.endFinished)
        #expect(ended.handle(input).isEmpty)
        #expect(ended.state == .ended(nil))
    }

    @Test("resume from a saved record: willResume + connect(resume) straight away")
    func resumeSaved() {
        var machine = SessionStateMachine()
        let out = machine.handle(.resumeSaved)
        #expect(out == [.event(.willResume), .effect(.connect(resume: true))])
        #expect(machine.state == .resuming(attempt: 1))
        _ = machine.handle(.resumed)
        #expect(machine.state == .connected)
    }
}

@Suite("ReconnectPolicy")
struct ReconnectPolicyTests {
    @Test("exponential from the initial delay, capped, jitter only shortens, bad numbers clamped")
    func delays() {
        let policy = ReconnectPolicy(initialDelay: 0.1, multiplier: 2, maxDelay: 1, jitter: 0.5)
        #expect(policy.delay(attempt: 1, unit: 0) == 0.1)
        #expect(policy.delay(attempt: 2, unit: 0) == 0.2)
        #expect(policy.delay(attempt: 5, unit: 0) == 1)
        #expect(policy.delay(attempt: 1_000_000, unit: 0) == 1)
        #expect(policy.delay(attempt: 5, unit: 0.999) > 0.5 && policy.delay(attempt: 5, unit: 0.999) <= 1)
        for attempt in 1...40 {
            for unit in stride(from: 0.0, to: 1.0, by: 0.1) {
                let delay = policy.delay(attempt: attempt, unit: unit)
                #expect(delay >= 0 && delay <= 1)
            }
        }
        let broken = ReconnectPolicy(initialDelay: .nan, multiplier: .infinity, maxDelay: -5, jitter: 7)
        #expect(broken.delay(attempt: 3, unit: .nan).isFinite)
        #expect(broken.delay(attempt: 3, unit: 0.5) == 0)
    }

    @Test("attempt limits: nil unlimited, 0 never, n allows 1…n")
    func limits() {
        #expect(ReconnectPolicy().allows(attempt: 1_000_000))
        #expect(!ReconnectPolicy.never.allows(attempt: 1))
        let three = ReconnectPolicy(maxAttempts: 3)
        #expect(three.allows(attempt: 3) && !three.allows(attempt: 4))
    }
}

@Suite("Reconnect: which failures are retried")
struct RetryableTests {
    @Test("transport failures and lost replies are retried; a gone session and failed device auth are not")
    func retryable() {
        #expect(CastSession.isRetryable(.connectFailed(.connectFailed(endpoint: "x", reason: "refused"))))
        #expect(CastSession.isRetryable(.requestFailed(step: "GET_STATUS", .timedOut(after: 10))))
        #expect(CastSession.isRetryable(.requestFailed(step: "GET_STATUS", .disconnected("reset"))))
        #expect(!CastSession.isRetryable(.connectFailed(.deviceAuthFailed(endpoint: "x", reason: "chain"))))
        #expect(CastSession.isRetryable(.connectFailed(.deviceAuthUnanswered(endpoint: "x", reason: "no reply within 5 s"))))
        #expect(!CastSession.isRetryable(.sessionGone(appID: "CC1AD845", sessionID: "s")))
        #expect(!CastSession.isRetryable(.requestFailed(step: "LAUNCH", .launchError(nil))))
    }
}
