import CastProtocol
import Synchronization

/// A session's requests over all its connections, by outcome: what its summary record (`didEnd`)
/// carries at info, so `castline logs timeline` counts requests without debug traffic records.
/// Thread-safe (the connections' event loops report, the session reads).
final class SessionRequestCounts: Sendable {
    private let counts = Mutex<(answered: Int, failed: Int, timedOut: Int)>((0, 0, 0))

    /// An observer for a connection's ``CastRequestHandler`` that counts here, then hands on to `next`.
    func observer(then next: CastRequestObserver?) -> CastRequestObserver {
        { [self] type, seconds, failure in
            counts.withLock { c in
                switch failure {
                case nil: c.answered += 1
                case .timedOut?:
                    c.failed += 1
                    c.timedOut += 1
                case .cancelled?: break
                default: c.failed += 1
                }
            }
            next?(type, seconds, failure)
        }
    }

    /// `requests` (answered or failed), `failedRequests`, `timedOutRequests`.
    var fields: [(String, Int)] {
        let c = counts.withLock { $0 }
        return [("requests", c.answered + c.failed), ("failedRequests", c.failed), ("timedOutRequests", c.timedOut)]
    }
}
