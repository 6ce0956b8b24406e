/// Commands that change what a device shows (cast, site, stop, queue, an announcement's start and
/// its restore) run one at a time per device, and the last one wins: a command that a newer one
/// overtakes gets a definite answer, 409 `superseded`, and sends nothing more to the device.
///
/// - A command waiting for its turn is superseded as soon as a newer one arrives (only the
///   newest waits).
/// - The command running is superseded at its next ``check(_:)`` (before a LAUNCH, before a
///   LOAD) and, if it finished meanwhile, its answer is the 409: what it put on the screen is
///   about to be replaced.
///
/// Not thread-safe on its own: it lives inside the ``ControlPlane`` actor.
struct DeviceCommandLanes {
    /// A command's place in its device's lane.
    struct Ticket: Sendable, Equatable {
        let device: String
        let number: Int
    }

    private struct Lane {
        var newest = 0
        var running: Int?
        /// The one command waiting for the lane (older waiters were superseded).
        var waiting: (number: Int, resume: CheckedContinuation<Bool, Never>)?
    }

    private var lanes: [String: Lane] = [:]

    /// A new ticket for `device`: it supersedes every older one (the one waiting hears false).
    mutating func issue(_ device: String) -> Ticket {
        var lane = lanes[device] ?? Lane()
        lane.newest += 1
        if let older = lane.waiting {
            lane.waiting = nil
            older.resume.resume(returning: false)
        }
        lanes[device] = lane
        return Ticket(device: device, number: lane.newest)
    }

    /// True when `ticket` may run now (the lane was free); otherwise the caller waits with
    /// ``wait(_:_:)``.
    mutating func tryStart(_ ticket: Ticket) -> Bool {
        guard lanes[ticket.device]?.running == nil else { return false }
        lanes[ticket.device]?.running = ticket.number
        return true
    }

    /// Parks `ticket` until the running command leaves (true: its turn) or a newer one arrives (false).
    mutating func wait(_ ticket: Ticket, _ resume: CheckedContinuation<Bool, Never>) {
        guard lanes[ticket.device]?.newest == ticket.number else { return resume.resume(returning: false) }
        lanes[ticket.device]?.waiting = (ticket.number, resume)
    }

    /// The running command is done: the waiting one, if any, runs next.
    mutating func leave(_ ticket: Ticket) {
        guard var lane = lanes[ticket.device], lane.running == ticket.number else { return }
        lane.running = nil
        if let next = lane.waiting {
            lane.waiting = nil
            lane.running = next.number
            next.resume.resume(returning: true)
        }
        // The lane (its counter) stays: an announcement's ticket is checked again at its restore.
        lanes[ticket.device] = lane
    }

    /// True when a newer command for the device arrived after `ticket`.
    func isSuperseded(_ ticket: Ticket) -> Bool {
        guard let lane = lanes[ticket.device] else { return false }
        return lane.newest != ticket.number
    }

    /// Throws 409 `superseded` when a newer command arrived: the caller sends nothing more.
    func check(_ ticket: Ticket?, deviceName: String) throws(ControlError) {
        guard let ticket, isSuperseded(ticket) else { return }
        throw Self.superseded(deviceName)
    }

    static func superseded(_ deviceName: String) -> ControlError {
        ControlError(.conflict, "superseded", "\(deviceName): a newer command to this device replaced this one (the last one wins)")
    }

}
