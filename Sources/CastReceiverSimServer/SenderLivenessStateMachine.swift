/// Heartbeat bookkeeping for one sender connection, as a receiver does it: PING a sender that has
/// been idle for `pingInterval`, drop one that has sent nothing for longer than `timeout`.
///
/// Any inbound message counts as a sign of life (PONG included). Pure value type driven by
/// explicit monotonic times (seconds); the connection handler calls ``tick(now:)`` periodically.
struct SenderLivenessStateMachine: Sendable, Equatable {
    /// What the caller must do after a tick.
    enum Action: Sendable, Equatable {
        case none
        /// Send `{"type":"PING"}` on the heartbeat namespace.
        case sendPing
        /// Close the connection: nothing arrived for `silentFor` seconds.
        case drop(silentFor: Double)
    }

    let pingInterval: Double
    let timeout: Double
    private(set) var lastInbound: Double
    private(set) var lastPingSent: Double?

    init(pingInterval: Double, timeout: Double, now: Double) {
        self.pingInterval = pingInterval
        self.timeout = timeout
        lastInbound = now
    }

    /// A message arrived.
    mutating func inbound(now: Double) {
        lastInbound = max(lastInbound, now)
    }

    mutating func tick(now: Double) -> Action {
        let silent = now - lastInbound
        if silent > timeout { return .drop(silentFor: silent) }
        guard silent >= pingInterval else { return .none }
        if let sent = lastPingSent, now - sent < pingInterval { return .none }
        lastPingSent = now
        return .sendPing
    }
}
