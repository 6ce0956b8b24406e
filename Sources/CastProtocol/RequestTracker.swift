import CastCore

/// Why a request did not get a successful reply. Device rejections keep the device's own words
/// (reason, detailed error code with its name).
public enum CastRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No reply within the request's timeout.
    case timedOut(after: Double)
    /// The connection ended before the reply (the session layer may retry after reconnecting).
    case disconnected(String)
    /// Cancelled by the caller.
    case cancelled
    /// A newer request of the same kind replaced it (e.g. a second LOAD before the first answered).
    case superseded(by: RequestID)
    /// `LOAD_FAILED`, with the device's `detailedErrorCode` when it sent one.
    case loadFailed(DetailedErrorCode?)
    /// `LOAD_CANCELLED`: a later load replaced this one on the device.
    case loadCancelled
    /// `INVALID_PLAYER_STATE`: the command does not apply in the player's state.
    case invalidPlayerState
    /// `INVALID_REQUEST` with its `reason` (INVALID_MEDIA_SESSION_ID, INVALID_COMMAND, …).
    case invalidRequest(ErrorReason?)
    /// `LAUNCH_ERROR` with its `reason` (NOT_FOUND, …).
    case launchError(ErrorReason?)

    public var description: String {
        switch self {
        case .timedOut(let seconds): return "no reply within \(seconds) s"
        case .disconnected(let why): return "disconnected before the reply: \(why)"
        case .cancelled: return "cancelled"
        case .superseded(let id): return "superseded by request \(id.rawValue)"
        case .loadFailed(let code?): return "LOAD_FAILED: \(code.name ?? "code") (\(code.rawValue))"
        case .loadFailed(nil): return "LOAD_FAILED"
        case .loadCancelled: return "LOAD_CANCELLED"
        case .invalidPlayerState: return "INVALID_PLAYER_STATE"
        case .invalidRequest(let reason): return "INVALID_REQUEST" + (reason.map { ": \($0.rawValue)" } ?? "")
        case .launchError(let reason): return "LAUNCH_ERROR" + (reason.map { ": \($0.rawValue)" } ?? "")
        case .deviceError(let code, let reason):
            return "ERROR" + (reason.map { ": \($0.rawValue)" } ?? "") + (code.map { " (\($0.name ?? "code") \($0.rawValue))" } ?? "")
        }
    }

    /// A generic `ERROR` reply with its `detailedErrorCode` and `reason` when present.
    case deviceError(DetailedErrorCode?, ErrorReason?)

    /// The failure a reply payload reports, or nil when it is a success (a status, availability…).
    public static func reported(by payload: CastPayload) -> CastRequestError? {
        switch payload {
        case .media(.loadFailed(_, _, let code)): return .loadFailed(code)
        case .media(.loadCancelled): return .loadCancelled
        case .media(.invalidPlayerState): return .invalidPlayerState
        case .media(.invalidRequest(_, let reason)): return .invalidRequest(reason)
        case .receiver(.invalidRequest(_, let reason)): return .invalidRequest(reason)
        case .receiver(.launchError(_, let reason)): return .launchError(reason)
        case .media(.error(let members)):
            return .deviceError(members["detailedErrorCode"]?.int.map { DetailedErrorCode(rawValue: Int(truncatingIfNeeded: $0)) },
                                members["reason"]?.string.map { ErrorReason(rawValue: $0) })
        default: return nil
        }
    }
}

/// Request correlation for one connection: allocates `requestId`s, matches replies to pending
/// requests, and reports the ones that time out, get superseded, or are left when the connection
/// ends. Pure value type with explicit monotonic times; `Waiter` is whatever the owner resumes
/// (a continuation, a promise, a test label).
public struct RequestTracker<Waiter: Sendable>: Sendable {
    public struct Pending: Sendable {
        public let id: RequestID
        public let namespace: CastNamespace
        /// The request's `type` (LOAD, GET_STATUS, …), for logs and supersession.
        public let type: String
        public let sentAt: Double
        public let deadline: Double
        public let waiter: Waiter
        let supersedable: Bool
        /// Order of ``begin`` calls (ids wrap, this does not).
        let sequence: UInt64
    }

    /// What happened to a pending request.
    public struct Completion: Sendable {
        public let request: Pending
        public let result: Result<CastPayload, CastRequestError>
    }

    private var pending: [RequestID: Pending] = [:]
    private var nextRawID: Int
    private var sequence: UInt64 = 0

    /// `firstID`: the first id handed out (ids grow by one, skip 0 and wrap within 1…Int32.max).
    public init(firstID: Int = 1) {
        nextRawID = min(max(1, firstID), Int(Int32.max))
    }

    /// Requests still waiting, oldest first (by send time, then id).
    public var waiting: [Pending] { pending.values.sorted(by: Self.older) }

    private static func older(_ a: Pending, _ b: Pending) -> Bool { (a.sentAt, a.sequence) < (b.sentAt, b.sequence) }

    /// The earliest deadline among pending requests.
    public var nextDeadline: Double? { pending.values.map(\.deadline).min() }

    /// Registers a request and returns its id. With `supersedes`, pending requests of the same
    /// namespace and type that were also `supersedes` end as ``CastRequestError/superseded(by:)``
    /// (returned, oldest first).
    public mutating func begin(namespace: CastNamespace, type: String, timeout: Double, now: Double, waiter: Waiter,
                               supersedes: Bool = false) -> (id: RequestID, superseded: [Completion]) {
        var id = RequestID(nextRawID)
        while pending[id] != nil || id.rawValue == 0 { id = RequestID(Self.after(id.rawValue)) }
        nextRawID = Self.after(id.rawValue)
        var replaced: [Completion] = []
        if supersedes {
            let older = pending.values.filter { $0.supersedable && $0.namespace == namespace && $0.type == type }.sorted(by: Self.older)
            for request in older {
                pending[request.id] = nil
                replaced.append(Completion(request: request, result: .failure(.superseded(by: id))))
            }
        }
        // `.infinity` means no timeout; NaN and negatives mean already due.
        let deadline = timeout >= 0 ? now + timeout : now
        sequence += 1
        pending[id] = Pending(id: id, namespace: namespace, type: type, sentAt: now, deadline: deadline, waiter: waiter,
                              supersedable: supersedes, sequence: sequence)
        return (id, replaced)
    }

    /// The pending request a reply answers (same namespace, same requestId), completed with the
    /// payload or the failure it reports. Nil for unsolicited messages (requestId 0 or absent) and
    /// for ids nobody waits for (late replies after a timeout).
    public mutating func reply(_ payload: CastPayload, on namespace: CastNamespace) -> Completion? {
        guard let id = payload.requestID, id != .unsolicited, let request = pending[id], request.namespace == namespace else {
            return nil
        }
        pending[id] = nil
        if let failure = CastRequestError.reported(by: payload) { return Completion(request: request, result: .failure(failure)) }
        return Completion(request: request, result: .success(payload))
    }

    /// Ends one request as cancelled (nil if it is no longer pending).
    public mutating func cancel(_ id: RequestID) -> Completion? {
        fail(id, with: .cancelled)
    }

    /// Ends one request with `error` (e.g. its message could not be sent); nil if it is no
    /// longer pending.
    public mutating func fail(_ id: RequestID, with error: CastRequestError) -> Completion? {
        guard let request = pending.removeValue(forKey: id) else { return nil }
        return Completion(request: request, result: .failure(error))
    }

    /// Ends every request whose deadline has passed, oldest first.
    public mutating func expire(now: Double) -> [Completion] {
        let due = pending.values.filter { $0.deadline <= now }.sorted(by: Self.older)
        for request in due { pending[request.id] = nil }
        return due.map { Completion(request: $0, result: .failure(.timedOut(after: $0.deadline - $0.sentAt))) }
    }

    /// Ends every pending request: the connection is gone.
    public mutating func disconnect(_ why: String) -> [Completion] {
        let all = waiting
        pending.removeAll()
        return all.map { Completion(request: $0, result: .failure(.disconnected(why))) }
    }

    private static func after(_ raw: Int) -> Int { raw >= Int(Int32.max) ? 1 : raw + 1 }
}
