import CastLogging
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What one listening socket lets clients hold: connections in all and per client address. A
/// connection over a bound is closed as it is accepted and counted; a line is logged at most once
/// a minute with the counts. Every server castline runs that a client can reach (the media server,
/// the control API's socket and TCP listener) admits its connections here, so that no client can
/// take the descriptors that device sessions and the API need. Thread-safe.
package final class ConnectionGate: Sendable {
    package struct Limits: Sendable, Equatable {
        /// Open connections in all.
        package var total: Int
        /// Open connections from one address (Unix-socket clients count as one address).
        package var perPeer: Int

        package init(total: Int, perPeer: Int) {
            self.total = total
            self.perPeer = perPeer
        }

        /// `fraction` of this process's descriptor limit (RLIMIT_NOFILE, soft), within
        /// `floor...ceiling`, `perPeer` each: a listener's share, so that all of them together
        /// leave a reserve for device sessions and files whatever the limit.
        package static func share(of fraction: Double, floor: Int, ceiling: Int, perPeer: Int) -> Limits {
            var limit = rlimit()
            let soft = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < 1 << 31 ? Int(limit.rlim_cur) : 65536
            let total = min(ceiling, max(floor, Int(Double(soft) * fraction)))
            return Limits(total: total, perPeer: min(perPeer, total))
        }
    }

    /// Connections closed over a bound since start.
    package struct Refusals: Sendable, Equatable {
        package var total = 0
        package var perPeer = 0
        package init() {}
    }

    package let limits: Limits
    private let name: String
    private let log: Logger

    private struct State {
        var open = 0
        var perPeer: [String: Int] = [:]
        var refusals = Refusals()
        var warnings = ReportThrottle()
        var stopped = false
    }

    private let state = Mutex(State())

    /// `name`: how the log names the listener (`media server`, `API (TCP)`).
    package init(_ name: String, limits: Limits, log: Logger) {
        self.name = name
        self.limits = limits
        self.log = log
    }

    /// Open connections now.
    package var openCount: Int { state.withLock { $0.open } }
    package var refusals: Refusals { state.withLock { $0.refusals } }

    /// Admits `channel` (counted until it closes), or closes it when a bound is reached or the
    /// gate was closed. Call it from the child channel initializer; false: do not set it up.
    package func admit(_ channel: Channel) -> Bool {
        let peer = Self.peer(of: channel)
        let now = Double(NIODeadline.now().uptimeNanoseconds) / 1e9
        let (admitted, warning) = state.withLock { s -> (Bool, String?) in
            guard !s.stopped else { return (false, nil) }
            var bound: String?
            if s.open >= limits.total {
                s.refusals.total += 1
                bound = "connections (\(limits.total))"
            } else if s.perPeer[peer, default: 0] >= limits.perPeer {
                s.refusals.perPeer += 1
                bound = "connections per address (\(limits.perPeer))"
            }
            guard let bound else {
                s.open += 1
                s.perPeer[peer, default: 0] += 1
                return (true, nil)
            }
            guard s.warnings.occurrence(now: now) != nil else { return (false, nil) }
            return (false, "\(name): a connection from \(peer) refused: over the bound on \(bound); refused so far: "
                    + "\(s.refusals.total) over the total, \(s.refusals.perPeer) over the per-address bound")
        }
        if let warning {
            let counts = refusals
            log.warning(warning, ["listener": .string(name), "peer": .string(peer), "refusedTotal": .int(counts.total),
                                  "refusedPerPeer": .int(counts.perPeer)])
        }
        guard admitted else {
            channel.close(promise: nil)
            return false
        }
        channel.closeFuture.whenComplete { _ in
            self.state.withLock { s in
                s.open -= 1
                let left = s.perPeer[peer, default: 1] - 1
                s.perPeer[peer] = left > 0 ? left : nil
            }
        }
        return true
    }

    /// Refuses every later connection (the server is stopping).
    package func close() {
        state.withLock { $0.stopped = true }
    }

    /// The client's address as bounds count it: an IPv4-mapped IPv6 address as IPv4, a zone
    /// dropped; every Unix-socket client is one address.
    package static func peer(of channel: Channel) -> String {
        guard let address = channel.remoteAddress else { return "?" }
        if case .unixDomainSocket = address { return "unix" }
        return normalised(address.ipAddress ?? "?")
    }

    /// An address as compared with a peer's: an IPv4-mapped IPv6 address as its IPv4 form, an
    /// IPv6 zone dropped, lowercase.
    package static func normalised(_ address: String) -> String {
        var text = address.lowercased()
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        if text.hasPrefix("::ffff:"), text.dropFirst(7).contains(".") { text = String(text.dropFirst(7)) }
        return text
    }
}
