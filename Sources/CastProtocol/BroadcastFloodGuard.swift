import CastLogging
import NIOCore

/// What a device's broadcasts (messages to `*`: RECEIVER_STATUS, MEDIA_STATUS, …) may cost: at
/// most ``allowance`` per namespace in a ``window``; past that the newest is held, replacing the
/// older, and delivered at the window's end. A device that floods statuses (48k a second seen
/// from a hostile one) reaches the session some 110 times a second per namespace, its last state
/// never lost. A message to castline itself (a reply) always passes, and drops a held broadcast
/// of its namespace (the reply is newer). Pure: time is a parameter (monotonic seconds).
package struct BroadcastFloodStateMachine<Message> {
    package enum Action {
        case pass
        /// Held: deliver ``due(_:now:)`` at this time (the first hold of the window), or a
        /// delivery is already scheduled (nil).
        case hold(deliverAt: Double?)
    }

    package let window: Double
    package let allowance: Int
    private var windows: [String: (start: Double, count: Int)] = [:]
    private var held: [String: Message] = [:]
    /// Broadcasts folded into newer ones (dropped) since the last ``takeFolded()``.
    private var folded = 0

    package init(window: Double = 0.1, allowance: Int = 10) {
        self.window = window
        self.allowance = allowance
    }

    /// A message on `namespace` arrived at `now`.
    package mutating func arrive(_ message: Message, namespace: String, broadcast: Bool, now: Double) -> Action {
        guard broadcast else {
            if held.removeValue(forKey: namespace) != nil { folded += 1 }
            return .pass
        }
        var current = windows[namespace] ?? (now, 0)
        if now - current.start >= window { current = (now, 0) }
        current.count += 1
        windows[namespace] = current
        guard current.count > allowance else {
            // A held broadcast is older than this one: it must not come after it.
            if held.removeValue(forKey: namespace) != nil { folded += 1 }
            return .pass
        }
        let first = held.updateValue(message, forKey: namespace) == nil
        if !first { folded += 1 }
        return .hold(deliverAt: first ? current.start + window : nil)
    }

    /// The delivery time of `namespace`'s held broadcast came: it, if still held (a new window begins).
    package mutating func due(_ namespace: String, now: Double) -> Message? {
        guard let message = held.removeValue(forKey: namespace) else { return nil }
        windows[namespace] = (now, 1)
        return message
    }

    /// How many broadcasts were folded since the last call, and resets the count.
    package mutating func takeFolded() -> Int {
        defer { folded = 0 }
        return folded
    }
}

/// ``BroadcastFloodStateMachine`` on a device connection, after the message codec: heartbeats
/// and replies pass untouched; a flood of broadcasts is folded. The first fold on a connection is
/// one warning naming the device, then one a minute with the count. Loop-confined.
package final class BroadcastFloodGuard: ChannelInboundHandler {
    package typealias InboundIn = CastMessage
    package typealias InboundOut = CastMessage

    private var machine = BroadcastFloodStateMachine<CastMessage>()
    private let log: Logger
    /// How the warning names the device (its endpoint: `192.168.1.20:8009`).
    private let device: String
    private var reports = ReportThrottle()
    private var foldedTotal = 0

    /// `log`: the connection's logger (its fields name the device); `device`: its endpoint.
    package init(log: Logger, device: String) {
        self.log = log
        self.device = device
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        let now = MonotonicClock.seconds()
        switch machine.arrive(message, namespace: message.namespace.rawValue, broadcast: message.destinationID == "*", now: now) {
        case .pass:
            context.fireChannelRead(data)
        case .hold(let deliverAt):
            report(now: now)
            guard let deliverAt else { return }
            let namespace = message.namespace.rawValue
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .nanoseconds(Int64(max(0, deliverAt - now) * 1e9))) {
                let (handler, context) = bound.value
                guard context.channel.isActive, let held = handler.machine.due(namespace, now: MonotonicClock.seconds()) else { return }
                context.fireChannelRead(NIOAny(held))
            }
        }
    }

    /// The first fold, then once a minute: how many broadcasts were folded.
    private func report(now: Double) {
        foldedTotal += 1
        guard reports.occurrence(now: now) != nil else { return }
        let folded = machine.takeFolded()
        log.warning("\(device) floods its broadcasts (more than \(machine.allowance) per namespace in \(Int(machine.window * 1000)) ms); "
                    + "castline keeps the newest of each and drops the rest: \(foldedTotal) held or dropped so far", [
            "problem": "flood", "folded": .int(folded), "foldedTotal": .int(foldedTotal),
        ])
    }
}
