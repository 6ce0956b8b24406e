/// Heartbeat bookkeeping for one CASTV2 connection, the same on both ends: PING the peer once it
/// has been silent for `pingInterval`, give up on it once it has been silent for longer than
/// `timeout`. Receivers drop silent senders this way; senders declare a silent device lost.
///
/// Any inbound message counts as a sign of life (PONG included). Pure value type driven by
/// explicit monotonic times (seconds); the owner calls ``tick(now:)`` periodically (see
/// ``tickInterval``).
public struct HeartbeatStateMachine: Sendable, Equatable {
    /// What the owner must do after a tick.
    public enum Action: Sendable, Equatable {
        case none
        /// Send `{"type":"PING"}` on the heartbeat namespace.
        case sendPing
        /// Give up on the connection: nothing arrived for `silentFor` seconds.
        case timedOut(silentFor: Double)
    }

    public let pingInterval: Double
    public let timeout: Double
    public private(set) var lastInbound: Double
    public private(set) var lastPingSent: Double?

    /// - Parameters:
    ///   - pingInterval: seconds of peer silence before a PING (real devices and the iOS SDK: 5).
    ///   - timeout: seconds of peer silence before giving up (receivers: about 15; senders: 10).
    ///   - now: the connection's start (monotonic seconds).
    public init(pingInterval: Double, timeout: Double, now: Double) {
        self.pingInterval = pingInterval
        self.timeout = timeout
        lastInbound = now
    }

    /// How often to call ``tick(now:)``: a fifth of the ping interval, within 50 ms…1 s, so a
    /// timeout is noticed at most that late.
    public var tickInterval: Double { max(0.05, min(1, pingInterval / 5)) }

    /// When calling ``tick(now:)`` next can change anything: the moment a PING falls due or,
    /// once one is out, the moment the silence exceeds the timeout (a millisecond past it).
    /// Owners that schedule one wake-up at this time instead of ticking periodically wake about
    /// once per ping interval (an earlier message only moves the deadline later, and the wake-up
    /// then just schedules the next one).
    public var nextTick: Double {
        var pingDue = lastInbound + pingInterval
        if let sent = lastPingSent, sent >= lastInbound { pingDue = max(pingDue, sent + pingInterval) }
        return min(pingDue, lastInbound + timeout + 0.001)
    }

    /// A message arrived.
    public mutating func inbound(now: Double) {
        lastInbound = max(lastInbound, now)
    }

    public mutating func tick(now: Double) -> Action {
        let silent = now - lastInbound
        if silent > timeout { return .timedOut(silentFor: silent) }
        guard silent >= pingInterval else { return .none }
        if let sent = lastPingSent, now - sent < pingInterval { return .none }
        lastPingSent = now
        return .sendPing
    }
}
