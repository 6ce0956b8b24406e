import CastCore
import CastHTTP
import CastLogging
import CastProtocol
import CastSender
import NIOCore

/// Whether the server behind a job's media or page URL is down, when a cast of it failed: a
/// LOAD the device refused (`LOAD_FAILED`, a load that never played), or a page whose pre-flight
/// could not fetch it. It touches only the URL the job already uses: one `HEAD` of it, bounded
/// in time (``timeout``) and in count (one per server per ``interval``; a pre-flight's failure is
/// its own evidence and probes nothing). Each verdict is one record of class `ServerProbe`:
/// `server` (`scheme://host:port`), `url`, `device`, `reachable`, `reason`, `probe` (`HEAD` or
/// `preflight`), `elapsedMs`; a down server at warning with `serverDown` (what `logs stats` and
/// the timeline count), a reachable one at info (the load failed for another reason).
package actor ServerProbe {
    package static let timeout = 2.0
    package static let interval = 30.0

    private let log: Logger
    private let group: EventLoopGroup
    private var lastProbe: [String: Double] = [:]
    /// Set by ``stop()``: no probe starts after it (the event loops may be shutting down).
    private var stopped = false
    /// The probes under way, which ``stop()`` waits for (each is bounded by ``timeout``).
    private var running: [UInt64: Task<Void, Never>] = [:]
    private var nextProbe: UInt64 = 0

    package init(group: EventLoopGroup, logSystem: LogSystem) {
        self.group = group
        log = Logger(class: "ServerProbe", system: logSystem)
    }

    /// `scheme://host:port` of an http(s) URL (the scheme's port when the URL names none).
    package static func server(of url: HTTPURL) -> String {
        "\(url.secure ? "https" : "http")://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)"
    }

    /// A cast of `url` to `device` failed (`failure`: what the device or the load said): probes
    /// the server once, within the bounds, and logs the verdict. Not an http(s) URL, or probed
    /// within the interval: nothing.
    package func castFailed(_ url: String, device: CastDevice, failure: String) async {
        guard !stopped, let target = HTTPURL(url) else { return }
        let server = Self.server(of: target)
        let now = MonotonicClock.seconds()
        if let last = lastProbe[server], now - last < Self.interval { return }
        lastProbe[server] = now
        let id = nextProbe
        nextProbe += 1
        let probe = Task { await self.probe(target, server: server, url: url, device: device, failure: failure, since: now) }
        running[id] = probe
        await probe.value
        running[id] = nil
    }

    /// No probe starts from now on, and those under way have ended (within ``timeout``): the
    /// job stops, and the event loops they use may be shut down next.
    package func stop() async {
        stopped = true
        for probe in running.values { await probe.value }
    }

    private func probe(_ target: HTTPURL, server: String, url: String, device: CastDevice, failure: String, since now: Double) async {
        let answer = await HTTPExchange.request(.HEAD, url: target, timeout: Self.timeout, maximumBody: 0, group: group)
        let elapsed = MonotonicClock.seconds() - now
        switch answer {
        case .failure(let why):
            down(server, url: url, device: device, reason: "\(why)", probe: "HEAD", elapsed: elapsed, after: failure)
        case .success(let head) where head.status >= 500:
            down(server, url: url, device: device, reason: "HTTP \(head.status)", probe: "HEAD", elapsed: elapsed, after: failure)
        case .success(let head):
            log.info("\(server) answers HTTP \(head.status): the cast of \(url) to \(device.friendlyName) failed for another reason (\(failure))", [
                "device": .string(device.id), "deviceName": .string(device.friendlyName), "server": .string(server), "url": .string(url),
                "reachable": .bool(true), "status": .int(Int64(head.status)), "probe": "HEAD", "elapsedMs": .int(Int64(elapsed * 1000)),
            ])
        }
    }

    /// A page's pre-flight could not fetch it (`reason`): the server is down, without a probe.
    package func preflightFailed(_ url: String, device: CastDevice, reason: String) {
        guard let target = HTTPURL(url) else { return }
        down(Self.server(of: target), url: url, device: device, reason: reason, probe: "preflight", elapsed: nil, after: nil)
    }

    private func down(_ server: String, url: String, device: CastDevice, reason: String, probe: String, elapsed: Double?, after failure: String?) {
        var fields: LogFields = [
            "device": .string(device.id), "deviceName": .string(device.friendlyName), "server": .string(server), "serverDown": .string(server),
            "url": .string(url), "reachable": .bool(false), "reason": .string(reason), "probe": .string(probe),
        ]
        if let elapsed { fields["elapsedMs"] = .int(Int(elapsed * 1000)) }
        if let failure { fields["castFailure"] = .string(failure) }
        log.warning("\(server) is down (\(reason)): \(device.friendlyName) cannot show \(url)", fields)
    }
}
