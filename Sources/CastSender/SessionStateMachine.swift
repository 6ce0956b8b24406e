import CastProtocol
import CastTransport

/// The session life cycle as a pure state machine: inputs in, listener events and effects out.
/// No sockets, no clock, no randomness of its own (jitter comes with the input), so every path
/// is tested without a device. ``CastSession`` performs the effects and feeds back the results.
public struct SessionStateMachine: Sendable {
    public enum Input: Sendable, Equatable {
        /// Start a new session (join or launch).
        case start
        /// Resume a session from a resume record (after a process restart).
        case resumeSaved
        /// The start sequence completed.
        case started
        /// The start sequence failed.
        case startFailed(CastSessionError)
        /// The connection ended without our asking. `jitter` ∈ [0, 1).
        case connectionLost(SuspendReason, jitter: Double)
        /// The scheduled retry is due.
        case retryDue
        /// A retry re-joined the app session.
        case resumed
        /// A retry failed. `retryable` false: the app session is gone, retrying cannot help.
        case resumeFailed(CastSessionError, retryable: Bool, jitter: Double)
        /// The session now runs on another device.
        case transferred
        /// The app stopped, was replaced, or closed our connection.
        case appGone(CastSessionError)
        /// The owner asked to end; `stopCasting` also stops the app.
        case end(stopCasting: Bool)
        /// The end sequence completed.
        case endFinished
    }

    /// Work for ``CastSession``.
    public enum Effect: Sendable, Equatable {
        /// Connect and run the start sequence (`resume`: re-join the known app session only).
        case connect(resume: Bool)
        /// Run ``Input/retryDue`` after `delay` seconds.
        case scheduleRetry(after: Double, attempt: Int)
        /// Cancel a scheduled retry or a connection attempt in flight.
        case cancelRetry
        /// Fail every pending request with ``CastRequestError/disconnected(_:)``.
        case failPendingRequests(String)
        /// Close the connection; with `stopApp` first send STOP for the app session.
        case close(stopApp: Bool)
        /// Write the resume record.
        case saveResumeRecord
        /// Delete the resume record.
        case deleteResumeRecord
    }

    public enum Output: Sendable, Equatable {
        case event(CastSessionEvent)
        case effect(Effect)
    }

    public private(set) var state: CastSessionState = .idle
    public let policy: ReconnectPolicy
    /// Retries since the connection was lost (0 when connected).
    public private(set) var attempt = 0
    /// What suspended the session, kept across retries.
    public private(set) var suspendReason: SuspendReason?
    private var lastRetryError: CastSessionError?

    public init(policy: ReconnectPolicy = ReconnectPolicy()) {
        self.policy = policy
    }

    /// Applies `input`. An input that does not apply in the current state returns `[]` and
    /// changes nothing (the caller logs it).
    public mutating func handle(_ input: Input) -> [Output] {
        switch (state, input) {
        case (.idle, .start):
            state = .connecting
            return [.event(.willStart), .effect(.connect(resume: false))]
        case (.idle, .resumeSaved):
            attempt = 1
            state = .resuming(attempt: 1)
            return [.event(.willResume), .effect(.connect(resume: true))]
        case (.connecting, .started):
            state = .connected
            return [.event(.didStart), .effect(.saveResumeRecord)]
        case (.connecting, .startFailed(let error)):
            state = .failed(error)
            return [.effect(.close(stopApp: false)), .event(.didFailToStart(error))]

        case (.connected, .connectionLost(let reason, let jitter)):
            suspendReason = reason
            let failPending = Output.effect(.failPendingRequests("\(reason)"))
            guard policy.allows(attempt: 1) else {
                let error = CastSessionError.connectionLost(Self.closeReason(reason))
                state = .ended(error)
                return [failPending, .event(.willEnd), .event(.didEnd(error)), .effect(.deleteResumeRecord)]
            }
            attempt = 0
            state = .suspended(reason)
            return [failPending, .event(.didSuspend(reason)), scheduleNext(jitter: jitter)]
        case (.suspended, .retryDue):
            attempt += 1
            state = .resuming(attempt: attempt)
            var out: [Output] = []
            if attempt == 1 { out.append(.event(.willResume)) }
            out.append(.effect(.connect(resume: true)))
            return out
        case (.resuming, .resumed):
            attempt = 0
            suspendReason = nil
            lastRetryError = nil
            state = .connected
            return [.event(.didResume(transferred: false)), .effect(.saveResumeRecord)]
        case (.resuming, .resumeFailed(let error, let retryable, let jitter)):
            lastRetryError = error
            if retryable, policy.allows(attempt: attempt + 1) {
                // The state says why it is still suspended: this attempt's failure (a refused
                // connect is not the device closing one); `suspendReason` keeps the first cause.
                state = .suspended(.connectionLost(.error("reconnect failed: \(error)")))
                return [scheduleNext(jitter: jitter)]
            }
            let final = retryable ? CastSessionError.reconnectGaveUp(attempts: attempt, lastError: "\(error)") : error
            state = .ended(final)
            return [.effect(.close(stopApp: false)), .event(.willEnd), .event(.didEnd(final)), .effect(.deleteResumeRecord)]
        case (.connected, .transferred):
            return [.event(.didResume(transferred: true)), .effect(.saveResumeRecord)]

        case (.connected, .appGone(let error)), (.resuming, .appGone(let error)):
            state = .ended(error)
            return [.effect(.failPendingRequests("\(error)")), .effect(.close(stopApp: false)), .event(.willEnd),
                    .event(.didEnd(error)), .effect(.deleteResumeRecord)]

        case (.connecting, .end):
            // Cancel the start: it fails as cancelled, nothing to stop.
            state = .failed(.cancelled)
            return [.effect(.cancelRetry), .effect(.close(stopApp: false)), .event(.didFailToStart(.cancelled))]
        case (.connected, .end(let stopCasting)):
            state = .ending
            return [.event(.willEnd), .effect(.close(stopApp: stopCasting))]
        case (.suspended, .end), (.resuming, .end):
            // No connection to stop the app on: end here.
            state = .ending
            return [.event(.willEnd), .effect(.cancelRetry), .effect(.close(stopApp: false))]
        case (.ending, .endFinished):
            state = .ended(nil)
            return [.effect(.failPendingRequests("the session ended")), .event(.didEnd(nil)), .effect(.deleteResumeRecord)]
        case (.idle, .end):
            state = .ended(nil)
            return []

        default:
            return []
        }
    }

    private func scheduleNext(jitter: Double) -> Output {
        .effect(.scheduleRetry(after: policy.delay(attempt: attempt + 1, unit: jitter), attempt: attempt + 1))
    }

    private static func closeReason(_ reason: SuspendReason) -> CastConnectionCloseReason {
        switch reason {
        case .connectionLost(let why): return why
        case .leaderMoved(let from, let to): return .error("the group's leader moved from \(from) to \(to)")
        }
    }
}
