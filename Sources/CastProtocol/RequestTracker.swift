import CastCore

/// Request correlation for one connection: allocates `requestId`s, matches replies to pending
/// requests, and reports the ones that time out, get superseded, or are left when the connection
/// ends. Pure value type with explicit monotonic times; `Waiter` is whatever the owner resumes
/// (a continuation, a promise, a test label).
public struct RequestTracker<Waiter: Sendable>: Sendable {
    public struct Pending: Sendable {
        public let id: RequestID
        public let namespace: CastNamespace
        /// Where it went (`receiver-0`, an app's transport id); "" when the owner did not say.
        public let destination: String
        /// The request's `type` (LOAD, GET_STATUS, …), for logs and supersession.
        public let type: String
        public let sentAt: Double
        /// Seconds it may wait (`.infinity`: no limit).
        public let timeout: Double
        public let deadline: Double
        public let waiter: Waiter
        /// The owner completes it after delivering the reply (see ``CastRequestSpec/completesAfterDelivery``).
        public let completesAfterDelivery: Bool
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

    /// Whether a request on `namespace` waits for its reply (a custom namespace's text is made
    /// JSON only then: nobody else here reads it).
    package func isWaiting(on namespace: CastNamespace) -> Bool { pending.values.contains { $0.namespace == namespace } }

    /// The earliest deadline among pending requests.
    public var nextDeadline: Double? { pending.values.map(\.deadline).min() }

    /// Registers a request and returns its id. With `supersedes`, pending requests of the same
    /// namespace and type that were also `supersedes` end as ``CastRequestError/superseded(by:)``
    /// (returned, oldest first).
    public mutating func begin(namespace: CastNamespace, type: String, timeout: Double, now: Double, waiter: Waiter,
                               supersedes: Bool = false, completesAfterDelivery: Bool = false,
                               destination: String = "") -> (id: RequestID, superseded: [Completion]) {
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
        pending[id] = Pending(id: id, namespace: namespace, destination: destination, type: type, sentAt: now, timeout: timeout, deadline: deadline, waiter: waiter,
                              completesAfterDelivery: completesAfterDelivery, supersedable: supersedes, sequence: sequence)
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

    /// Ends every request sent to `destination` with `error`, oldest first (the app behind that
    /// transport stopped: nothing there will answer; requests elsewhere stay).
    public mutating func fail(destination: String, with error: CastRequestError) -> [Completion] {
        let gone = pending.values.filter { $0.destination == destination }.sorted(by: Self.older)
        for request in gone { pending[request.id] = nil }
        return gone.map { Completion(request: $0, result: .failure(error)) }
    }

    /// Ends every request whose deadline has passed, oldest first.
    public mutating func expire(now: Double) -> [Completion] {
        let due = pending.values.filter { $0.deadline <= now }.sorted(by: Self.older)
        for request in due { pending[request.id] = nil }
        return due.map { Completion(request: $0, result: .failure(.timedOut(after: $0.timeout >= 0 ? $0.timeout : 0))) }
    }

    /// Ends every pending request: the connection is gone.
    public mutating func disconnect(_ why: String) -> [Completion] {
        let all = waiting
        pending.removeAll()
        return all.map { Completion(request: $0, result: .failure(.disconnected(why))) }
    }

    private static func after(_ raw: Int) -> Int { raw >= Int(Int32.max) ? 1 : raw + 1 }
}
