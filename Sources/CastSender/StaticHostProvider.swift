import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore
import Synchronization
import SystemCrypto

/// The built-in discovery provider for configured hosts (`host[:port]`, optional name, id and
/// model).
///
/// With probing on (default) each host is contacted over TLS, and its identity read as mDNS
/// discovery reads a TXT record: eureka_info gives the id (when not configured), the name (when
/// not configured), the model (unless configured), the capabilities, and for a speaker group's
/// endpoint the group it is (``AddressedDeviceIdentity``); without an eureka_info answer the id
/// comes from the certificate's common name. GET_APP_AVAILABILITY answers which of the
/// criteria's apps the device can run. An unreachable host is retried every ``retryInterval``
/// seconds, reported as a provider problem meanwhile, and listed as soon as it answers; a listed
/// host is re-probed every ``recheckInterval`` seconds and removed when it stops answering, unless
/// the caller holds a live connection to its device (``isConnected``): that connection's heartbeat
/// notices a device gone sooner than a probe, and a second TLS connection to every device each
/// interval is load on the fleet for nothing. Without probing, hosts are listed as configured.
///
/// Noise is bounded: a failed probe is a `debug` record; the problem line (a warning from the
/// ``DiscoveryManager``) comes when the set of failures changes; while hosts stay unreachable,
/// one `info` summary per ``reminderInterval`` says how many, for how long and how many probes.
public final class StaticHostProvider: DiscoveryProvider {
    /// One configured host. Value type.
    public struct Host: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var name: String?
        public var id: String?
        /// The configured model (`devices[].model`): wins over the one eureka_info gives.
        public var model: String?

        public init(host: String, port: Int = 8009, name: String? = nil, id: String? = nil, model: String? = nil) {
            self.host = host
            self.port = port
            self.name = name
            self.id = id
            self.model = model
        }
    }

    public let name = "static"
    public let hosts: [Host]
    public let probe: Bool
    /// Seconds between probes of an unreachable host.
    public let retryInterval: Double
    /// Seconds between probes of a listed host (to notice it is gone).
    public let recheckInterval: Double
    /// Seconds between the summaries of hosts that stay unreachable.
    public let reminderInterval: Double
    /// Whether the caller holds a live connection to the device with this id (the daemon's
    /// sessions): a listed host whose device it answers true for is not re-probed.
    private let isConnected: @Sendable (String) -> Bool
    private let group: EventLoopGroup
    private let connectTimeout: Double
    /// Where eureka_info is asked (8443 HTTPS, then 8008 HTTP); tests give the simulator's.
    private let eurekaPorts: (https: Int, http: Int)
    /// What each host's eureka_info said, kept while the host answers (a device's identity does
    /// not change under a live connection), and how often it gave none.
    private let identities = Mutex<[Host: EurekaDeviceInfo]>([:])
    private let identityMisses = Mutex<[Host: Int]>([:])
    private let logSystem: LogSystem
    private let log: Logger
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let rounds = Mutex(0)
    private let probes = Mutex(0)

    /// Whether every host has been probed once (found or failed): what a caller waiting for
    /// these hosts alone (no mDNS) can stop waiting at.
    public var hasProbedEveryHost: Bool { rounds.withLock { $0 > 0 } || !probe }
    /// Rounds run so far (each probes the hosts then due), and probes made in them.
    var roundsRun: Int { rounds.withLock { $0 } }
    var probesMade: Int { probes.withLock { $0 } }

    public init(hosts: [Host], probe: Bool = true, retryInterval: Double = 10, recheckInterval: Double = 60,
                connectTimeout: Double = 3, reminderInterval: Double = 300, isConnected: @escaping @Sendable (String) -> Bool = { _ in false },
                eurekaPorts: (https: Int, http: Int) = (EurekaInfoClient.httpsPort, EurekaInfoClient.httpPort),
                group: EventLoopGroup, logSystem: LogSystem = .shared) {
        self.hosts = hosts
        self.probe = probe
        self.retryInterval = min(max(retryInterval.isNaN ? 10 : retryInterval, 0.1), 3600)
        self.recheckInterval = min(max(recheckInterval.isNaN ? 60 : recheckInterval, 0.1), 86_400)
        self.reminderInterval = min(max(reminderInterval.isNaN ? 300 : reminderInterval, 0.1), 86_400)
        self.connectTimeout = connectTimeout
        self.eurekaPorts = eurekaPorts
        self.isConnected = isConnected
        self.group = group
        self.logSystem = logSystem
        self.log = Logger(class: "StaticHostProvider", system: logSystem)
    }

    public func start(_ sink: DiscoveryProviderSink) async throws(DiscoveryProviderError) {
        guard !hosts.isEmpty else { throw DiscoveryProviderError("no static hosts configured") }
        guard probe else {
            for host in hosts { sink.found(Self.unprobed(host)) }
            return
        }
        let runner = Task { [self] in await self.run(sink) }
        let previous = task.withLock { current -> Task<Void, Never>? in
            defer { current = runner }
            return current
        }
        previous?.cancel()
    }

    public func stop() async {
        let running = task.withLock { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        running?.cancel()
        await running?.value
    }

    static func unprobed(_ host: Host) -> CastDevice {
        let endpoint = HostPort.name(host: host.host, port: host.port)
        return CastDevice(id: host.id ?? endpoint, friendlyName: host.name ?? endpoint, host: host.host, port: host.port,
                          modelName: host.model ?? "")
    }

    /// Probes of a connected device whose eureka_info has not answered yet: its identity is
    /// asked again at each recheck until it answers or this many probes gave none.
    static let identityAttempts = 3

    /// Whether `host`'s identity is settled: its eureka_info answered, or gave none
    /// ``identityAttempts`` times.
    func identitySettled(_ host: Host) -> Bool {
        identities.withLock { $0[host] != nil } || identityMisses.withLock { $0[host, default: 0] >= Self.identityAttempts }
    }

    /// Probes every host (at most ``maxConcurrentProbes`` at a time), then re-probes each
    /// unreachable host every ``retryInterval`` and each listed one every ``recheckInterval``
    /// until cancelled.
    private func run(_ sink: DiscoveryProviderSink) async {
        var listed: [Host: String] = [:]
        var failures: [Host: String] = [:]
        var due: [Host: Double] = Dictionary(hosts.map { ($0, 0) }, uniquingKeysWith: { a, _ in a })
        var reminder = UnreachableReminder()
        while !Task.isCancelled {
            let now = MonotonicClock.seconds()
            let batch = hosts.filter { host in
                guard (due[host] ?? 0) <= now else { return false }
                // A listed device the caller is connected to is known to be there: its recheck
                // moves on an interval without a probe (once its identity is settled).
                guard let id = listed[host], isConnected(id), identitySettled(host) else { return true }
                due[host] = now + recheckInterval
                return false
            }
            let results = await probeAll(batch, appIDs: sink.appIDs)
            guard !Task.isCancelled else { return }
            let finished = MonotonicClock.seconds()
            for (host, result) in results {
                switch result {
                case .success(let device):
                    if listed[host] != device.id {
                        let summary = AddressedDeviceIdentity.summary(device, eureka: identities.withLock { $0[host] }, model: host.model)
                        log.info("\(device.friendlyName) at \(device.endpoint): \(summary)", [
                            "device": .string(device.id), "deviceName": .string(device.friendlyName), "model": .string(device.modelName),
                            "group": .bool(device.isGroup),
                        ])
                    }
                    if let old = listed[host], old != device.id {
                        listed[host] = nil
                        if !listed.values.contains(old) { sink.lost(deviceID: old) }
                    }
                    listed[host] = device.id
                    failures[host] = nil
                    due[host] = finished + recheckInterval
                    sink.found(device)
                case .failure(let failure):
                    failures[host] = failure.reason
                    due[host] = finished + retryInterval
                    // Whatever answers there next is asked who it is again.
                    identities.withLock { $0[host] = nil }
                    identityMisses.withLock { $0[host] = nil }
                    // Lost only when no other configured host still reaches the same device.
                    if let old = listed.removeValue(forKey: host), !listed.values.contains(old) { sink.lost(deviceID: old) }
                }
            }
            sink.problem(Self.summary(failures.values.sorted(), of: hosts.count))
            reminder.note(results.map { ($0.0, $0.1.failureReason) }, at: finished)
            if let text = reminder.due(at: finished, interval: reminderInterval, hosts: hosts.count, retryInterval: retryInterval,
                                       reasons: failures.values.sorted()) {
                log.info(text.message, text.fields)
            }
            rounds.withLock { $0 += 1 }
            let next = due.values.min() ?? (finished + retryInterval)
            try? await Task.sleep(for: .seconds(min(max(next - MonotonicClock.seconds(), 0.05), 3600)))
        }
    }

    /// Probes `batch`, at most ``maxConcurrentProbes`` at a time.
    private func probeAll(_ batch: [Host], appIDs: Set<String>) async -> [(Host, Result<CastDevice, ProbeFailure>)] {
        await withTaskGroup(of: (Host, Result<CastDevice, ProbeFailure>).self) { group in
            var pending = batch[...]
            var results: [(Host, Result<CastDevice, ProbeFailure>)] = []
            for _ in 0..<Self.maxConcurrentProbes {
                guard let host = pending.popFirst() else { break }
                group.addTask { (host, await self.probe(host, appIDs: appIDs)) }
            }
            for await result in group {
                results.append(result)
                if let host = pending.popFirst() { group.addTask { (host, await self.probe(host, appIDs: appIDs)) } }
            }
            return results
        }
    }

    /// One line for the provider problem: how many hosts fail and the first few reasons.
    static func summary(_ reasons: [String], of total: Int) -> String? {
        guard !reasons.isEmpty else { return nil }
        let shown = reasons.prefix(3).joined(separator: "; ")
        let more = reasons.count > 3 ? "; and \(reasons.count - 3) more" : ""
        return "\(reasons.count) of \(total) host(s) unreachable: \(shown)\(more)"
    }

    /// Probes in flight at once.
    static let maxConcurrentProbes = 64

    struct ProbeFailure: Error {
        let reason: String
    }

    /// What the periodic summary of unreachable hosts needs: since when each fails, the probes
    /// since the last summary, and when that was. Pure.
    struct UnreachableReminder {
        private(set) var since: [Host: Double] = [:]
        private(set) var probes = 0
        private(set) var last: Double?

        /// One round's results: a failure keeps (or starts) its host's outage, a success ends it.
        mutating func note(_ results: [(Host, String?)], at now: Double) {
            for (host, failure) in results {
                if failure != nil {
                    if since.isEmpty { last = now }   // a new outage: its first summary is one interval away
                    since[host] = since[host] ?? now
                    probes += 1
                } else {
                    since[host] = nil
                }
            }
            if since.isEmpty { probes = 0 }
        }

        /// The summary when one is due (a full interval since the last, hosts still failing).
        mutating func due(at now: Double, interval: Double, hosts: Int, retryInterval: Double,
                          reasons: [String]) -> (message: String, fields: LogFields)? {
            guard !since.isEmpty, let last, now - last >= interval else { return nil }
            let longest = now - (since.values.min() ?? now)
            defer {
                self.last = now
                probes = 0
            }
            let more: String = reasons.count > 3 ? "; and \(reasons.count - 3) more" : ""
            let shown: String = reasons.prefix(3).joined(separator: "; ") + more
            let seconds = Int(longest)
            let message: String = "still unreachable: \(since.count) of \(hosts) host(s), the longest for \(seconds) s; "
                + "\(probes) failed probe(s) since the last summary, retried every \(retryInterval.formatted) s: \(shown)"
            var fields = LogFields()
            fields["unreachable"] = .int(since.count)
            fields["hosts"] = .int(hosts)
            fields["longestSeconds"] = .int(seconds)
            fields["probes"] = .int(probes)
            return (message, fields)
        }
    }

    private func probe(_ host: Host, appIDs: Set<String>) async -> Result<CastDevice, ProbeFailure> {
        probes.withLock { $0 += 1 }
        var options = CastConnectionOptions()
        options.connectTimeout = connectTimeout
        options.logSystem = logSystem
        options.senderID = "sender-probe"
        // The provider reports failures itself (problem line, periodic summary).
        options.connectFailureLevel = .debug
        let connection: CastConnection
        do {
            connection = try await CastConnection.connect(host: host.host, port: host.port, options: options, group: group)
        } catch {
            return .failure(ProbeFailure(reason: "\(error)"))
        }
        var device = Self.unprobed(host)
        let commonName = (try? Certificate(derBytes: connection.peerCertificateDER))?.commonName.flatMap { $0.isEmpty ? nil : $0 }
        if host.id == nil, let commonName { device.id = commonName }
        // eureka_info over HTTP(S) while the Cast connection asks which apps run.
        async let eureka = identity(of: host)
        if !appIDs.isEmpty {
            let answers = await Self.appAvailability(appIDs.sorted(), on: connection, timeout: connectTimeout)
            device.supportedAppIDs = Set(answers.filter { $0.value }.keys)
            device.unavailableAppIDs = Set(answers.filter { !$0.value }.keys)
        }
        let info = await eureka
        await connection.close()
        device = AddressedDeviceIdentity.identify(device, eureka: info, keepName: host.name != nil, keepID: host.id != nil, model: host.model,
                                                  certificateID: commonName)
        log.debug("probed \(device): \(AddressedDeviceIdentity.summary(device, eureka: info, model: host.model))", [
            "device": .string(device.id), "model": .string(device.modelName), "group": .bool(device.isGroup),
            "apps": .string(device.supportedAppIDs.sorted().joined(separator: ",")),
            "unavailableApps": .string(device.unavailableAppIDs.sorted().joined(separator: ",")),
        ])
        return .success(device)
    }

    /// `host`'s eureka_info: the one kept from an earlier probe, else asked now (at most 2 s);
    /// nil when the device gives none.
    private func identity(of host: Host) async -> EurekaDeviceInfo? {
        if let known = identities.withLock({ $0[host] }) { return known }
        let info = await EurekaInfoClient.describe(host: host.host, httpsPort: eurekaPorts.https, httpPort: eurekaPorts.http,
                                                   timeout: min(connectTimeout, 2), group: group, logSystem: logSystem)
        if let info {
            identities.withLock { $0[host] = info }
        } else {
            identityMisses.withLock { $0[host, default: 0] += 1 }
        }
        return info
    }

    /// CONNECT + GET_APP_AVAILABILITY: app id → available (empty when no answer).
    static func appAvailability(_ appIDs: [String], on connection: CastConnection, timeout: Double) async -> [String: Bool] {
        let connect = ConnectionMessage.connect(ConnectRequest(userAgent: "castline")).json
        connection.enqueue(CastMessage(source: "sender-probe", destination: "receiver-0", namespace: .connection, json: connect),
                           flush: false)
        let availability = connection.request(
            source: "sender-probe", destination: "receiver-0", namespace: .receiver, type: "GET_APP_AVAILABILITY", timeout: timeout,
            build: { ReceiverMessage.getAppAvailability(requestID: $0, appIDs: appIDs).json },
            map: { payload -> Result<[String: Bool], CastRequestError> in
                guard case .receiver(.appAvailability(_, let entries)) = payload else {
                    return .failure(.deviceError(nil, ErrorReason(rawValue: "unexpected reply \(payload.typeName ?? "?")")))
                }
                return .success(Dictionary(entries.map { ($0.appID, $0.availability == .available) }, uniquingKeysWith: { $1 }))
            })
        return (try? await availability.value()) ?? [:]
    }
}

extension Result where Failure == StaticHostProvider.ProbeFailure {
    /// The probe's failure text, nil when it succeeded.
    var failureReason: String? {
        if case .failure(let failure) = self { return failure.reason }
        return nil
    }
}
