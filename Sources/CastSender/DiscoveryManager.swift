import CastLogging
import Synchronization

/// What the device list went through.
public enum DiscoveryEvent: Sendable, Equatable {
    case started
    /// `index` in the sorted list.
    case inserted(CastDevice, index: Int)
    case updated(CastDevice, index: Int)
    case removed(CastDevice)
    /// A provider cannot discover (`reason`), or recovered (`reason` nil).
    case problem(provider: String, reason: String?)
    case stopped
}

/// Hears discovery (held weakly).
public protocol DiscoveryManagerListener: AnyObject, Sendable {
    func discoveryManager(_ manager: DiscoveryManager, didReceive event: DiscoveryEvent)
}

/// Why the device list is empty (the headless form of the iOS "Cast not available" help).
public struct DiscoveryExplanation: Sendable, Equatable, CustomStringConvertible {
    /// Discovery was never started (or was stopped).
    public var notStarted: Bool
    /// No provider is registered.
    public var noProviders: Bool
    /// A provider that failed, and why.
    public struct ProviderFailure: Sendable, Equatable {
        public var name: String
        public var reason: String
    }

    /// Providers that failed, with why.
    public var failedProviders: [ProviderFailure]
    /// Devices found but filtered out by the criteria.
    public var filteredOut: Int
    /// The app ids the criteria ask for.
    public var criteriaAppIDs: [String]

    /// One line per reason, each with what to do.
    public var lines: [String] {
        var lines: [String] = []
        if noProviders { lines.append("no discovery provider is configured: add static hosts or enable the avahi plugin") }
        if notStarted { lines.append("discovery is not running: start it (disableDiscoveryAutostart is set, or it was stopped)") }
        for failure in failedProviders { lines.append("provider \(failure.name) failed: \(failure.reason)") }
        if filteredOut > 0 {
            lines.append("\(filteredOut) device(s) found but filtered out: they do not support app \(criteriaAppIDs.joined(separator: ", "))")
        }
        if lines.isEmpty { lines.append("providers are running and found no device yet: check that the devices are on and on this network") }
        return lines
    }

    public var description: String { lines.joined(separator: "; ") }
}

/// Aggregates discovery providers (GCKDiscoveryManager): one list of devices, deduplicated by
/// device id, filtered by ``DiscoveryCriteria``, sorted by friendly name, with events for
/// start, insert, update, remove, and an explanation when the list is empty.
public actor DiscoveryManager {
    public let criteria: DiscoveryCriteria
    private var providers: [any DiscoveryProvider] = []
    /// Reports by device id, then provider name (the newest report of any provider wins).
    private var reports: [String: [String: CastDevice]] = [:]
    private var reportOrder: [String: [String]] = [:]
    private var problems: [String: String] = [:]
    private var visible: [CastDevice] = []
    private var running = false
    private let listeners = WeakListeners<any DiscoveryManagerListener>()
    /// Unbounded: each event is a device found, changed or lost, which no later event repeats. A
    /// static list of 1,000 TVs is 1,000 events at once; a bounded buffer dropped the oldest
    /// while the daemon was still registering the first, and those TVs were never connected.
    private let fanout = EventFanout<DiscoveryEvent>("discovery events", bufferLimit: nil)
    private let log: Logger
    /// Provider reports, in the order they were made (one consumer keeps that order).
    private enum Report: Sendable {
        case found(String, CastDevice)
        case lost(String, String)
        case problem(String, String?)
    }
    private let reportStream: AsyncStream<Report>
    private let reportSink: AsyncStream<Report>.Continuation
    private var consumer: Task<Void, Never>?

    public init(criteria: DiscoveryCriteria, logSystem: LogSystem = .shared) {
        self.criteria = criteria
        self.log = Logger(class: "DiscoveryManager", system: logSystem)
        (reportStream, reportSink) = AsyncStream.makeStream(of: Report.self)
    }

    deinit {
        reportSink.finish()
        consumer?.cancel()
    }

    private func startConsumer() {
        guard consumer == nil else { return }
        let stream = reportStream
        consumer = Task { [weak self] in
            for await report in stream {
                guard let self else { return }
                switch report {
                case .found(let provider, let device): await self.found(device, from: provider)
                case .lost(let provider, let id): await self.lost(id, from: provider)
                case .problem(let provider, let reason): await self.problem(reason, from: provider)
                }
            }
        }
    }

    public nonisolated func addListener(_ listener: any DiscoveryManagerListener) { listeners.add(listener) }
    public nonisolated func removeListener(_ listener: any DiscoveryManagerListener) { listeners.remove(listener) }

    /// Every event from now on.
    public nonisolated func events() -> AsyncStream<DiscoveryEvent> { fanout.stream() }

    /// Registers a provider (started at once when discovery runs).
    public func add(_ provider: any DiscoveryProvider) async {
        providers.append(provider)
        if running { await start(provider) }
    }

    /// Stops and removes the provider named `name` (a config reload replaced it): the devices
    /// only it reported are removed.
    public func remove(providerNamed name: String) async {
        let (gone, kept) = (providers.filter { $0.name == name }, providers.filter { $0.name != name })
        guard !gone.isEmpty else { return }
        providers = kept
        for provider in gone { await provider.stop() }
        for id in reports.keys.sorted() where reports[id]?[name] != nil { lost(id, from: name) }
        problem(nil, from: name)
        log.info("provider \(name) removed", ["provider": .string(name)])
    }

    /// Whether discovery is running.
    public var isRunning: Bool { running }

    /// The devices that pass the criteria, sorted by friendly name (then id).
    public var devices: [CastDevice] { visible }

    /// The device with `id`, if listed.
    public func device(withID id: String) -> CastDevice? { visible.first { $0.id == id } }

    /// Starts every provider.
    public func start() async {
        guard !running else { return }
        running = true
        startConsumer()
        log.info("discovery started with \(providers.count) provider(s)", ["providers": .int(providers.count)])
        emit(.started)
        for provider in providers {
            guard running else { return }   // stopped while providers were starting
            await start(provider)
        }
    }

    /// Stops every provider and empties the list.
    public func stop() async {
        guard running else { return }
        running = false
        for provider in providers { await provider.stop() }
        for device in visible { emit(.removed(device)) }
        visible.removeAll()
        reports.removeAll()
        reportOrder.removeAll()
        problems.removeAll()
        log.info("discovery stopped")
        emit(.stopped)
    }

    /// Why ``devices`` is empty; nil when it is not.
    public var explanation: DiscoveryExplanation? {
        guard visible.isEmpty else { return nil }
        return DiscoveryExplanation(
            notStarted: !running, noProviders: providers.isEmpty,
            failedProviders: problems.sorted { $0.key < $1.key }.map { DiscoveryExplanation.ProviderFailure(name: $0.key, reason: $0.value) },
            filteredOut: filteredOutCount, criteriaAppIDs: criteria.appIDs.sorted())
    }

    /// Devices reported but not listed because of the criteria.
    public var filteredOutCount: Int {
        reports.keys.filter { id in merged(id).map { !criteria.accepts($0) } ?? false }.count
    }

    /// Waits until a device passing `predicate` is listed, or `timeout` seconds pass.
    public func waitForDevice(timeout: Double, where predicate: @escaping @Sendable (CastDevice) -> Bool) async -> CastDevice? {
        // Subscribed before the check: nothing runs on the actor in between, so no change is missed.
        let stream = fanout.stream()
        if let device = visible.first(where: predicate) { return device }
        let event = await stream.first(within: timeout) { event in
            switch event {
            case .inserted(let device, _), .updated(let device, _): return predicate(device)
            default: return false
            }
        }
        switch event {
        case .inserted(let device, _)?, .updated(let device, _)?: return device
        default: return nil
        }
    }

    private func start(_ provider: any DiscoveryProvider) async {
        let name = provider.name
        let reports = reportSink
        let sink = DiscoveryProviderSink(
            provider: name, criteriaAppIDs: criteria.appIDs,
            onFound: { provider, device in reports.yield(.found(provider, device)) },
            onLost: { provider, id in reports.yield(.lost(provider, id)) },
            onProblem: { provider, reason in reports.yield(.problem(provider, reason)) })
        do {
            try await provider.start(sink)
            guard running else {
                await provider.stop()   // discovery stopped while this one was starting
                return
            }
            log.info("provider \(name) started", ["provider": .string(name)])
        } catch {
            problems[name] = error.reason
            log.error("provider \(name) cannot start: \(error.reason)", ["provider": .string(name), "reason": .string(error.reason)])
            emit(.problem(provider: name, reason: error.reason))
        }
    }

    // MARK: - Reports

    func found(_ device: CastDevice, from provider: String) {
        guard running else { return }
        var byProvider = reports[device.id] ?? [:]
        byProvider[provider] = device
        reports[device.id] = byProvider
        var order = reportOrder[device.id] ?? []
        order.removeAll { $0 == provider }
        order.append(provider)
        reportOrder[device.id] = order
        refresh(device.id)
    }

    func lost(_ id: String, from provider: String) {
        guard running, reports[id]?[provider] != nil else { return }
        reports[id]?[provider] = nil
        reportOrder[id]?.removeAll { $0 == provider }
        if reports[id]?.isEmpty == true {
            reports[id] = nil
            reportOrder[id] = nil
        }
        refresh(id)
    }

    func problem(_ reason: String?, from provider: String) {
        guard running else { return }
        if let reason {
            if problems[provider] != reason {
                log.warning("provider \(provider): \(reason)", ["provider": .string(provider), "reason": .string(reason)])
                problems[provider] = reason
                emit(.problem(provider: provider, reason: reason))
            }
        } else if problems.removeValue(forKey: provider) != nil {
            log.info("provider \(provider) recovered", ["provider": .string(provider)])
            emit(.problem(provider: provider, reason: nil))
        }
    }

    /// The newest report of the device, with app support merged from every provider.
    private func merged(_ id: String) -> CastDevice? {
        guard let byProvider = reports[id], let newest = reportOrder[id]?.last, var device = byProvider[newest] else { return nil }
        for other in byProvider.values {
            device.supportedAppIDs.formUnion(other.supportedAppIDs)
            device.unavailableAppIDs.formUnion(other.unavailableAppIDs)
        }
        device.unavailableAppIDs.subtract(device.supportedAppIDs)
        return device
    }

    private func refresh(_ id: String) {
        let current = merged(id).flatMap { criteria.accepts($0) ? $0 : nil }
        let oldIndex = visible.firstIndex { $0.id == id }
        switch (oldIndex, current) {
        case (nil, nil):
            if let device = merged(id) {
                log.debug("device \(device) filtered out by the criteria", ["device": .string(id)])
            }
        case (let index?, nil):
            let old = visible.remove(at: index)
            log.info("device removed: \(old)", ["device": .string(id), "deviceName": .string(old.friendlyName)])
            emit(.removed(old))
        case (nil, let device?):
            let index = insertionIndex(device)
            visible.insert(device, at: index)
            log.info("device found: \(device)", ["device": .string(id), "deviceName": .string(device.friendlyName),
                                                  "endpoint": .string(device.endpoint), "provider": .string(device.provider)])
            emit(.inserted(device, index: index))
        case (let index?, let device?):
            guard visible[index] != device else { return }
            visible.remove(at: index)
            let newIndex = insertionIndex(device)
            visible.insert(device, at: newIndex)
            log.info("device updated: \(device)", ["device": .string(id), "deviceName": .string(device.friendlyName),
                                                    "endpoint": .string(device.endpoint)])
            emit(.updated(device, index: newIndex))
        }
    }

    private func insertionIndex(_ device: CastDevice) -> Int {
        visible.firstIndex { Self.sortsBefore(device, $0) } ?? visible.count
    }

    /// Friendly name, case-insensitively, then id.
    static func sortsBefore(_ a: CastDevice, _ b: CastDevice) -> Bool {
        let left = a.friendlyName.lowercased(), right = b.friendlyName.lowercased()
        return left == right ? a.id < b.id : left < right
    }

    private func emit(_ event: DiscoveryEvent) {
        fanout.emit(event)
        for listener in listeners.current { listener.discoveryManager(self, didReceive: event) }
    }
}
