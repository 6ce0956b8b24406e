import CastCore
import CastLogging
#if canImport(Glibc)
import Glibc
#endif

/// A video wall: the same media on many TVs, started at one instant and held together.
///
/// A start loads the item paused on every TV, measures each one's delay on its warm session
/// (``RoundTripFilter``), picks an instant the slowest can still make, and sends each TV its PLAY
/// so that its first frame lands on that instant (``StartPlan``). While it plays, each TV's
/// position is read against the wall's ``WallTimeline`` (``PositionErrorFilter``) and corrected
/// by a rate nudge or a seek (``SyncPolicy/correction(for:rates:)``). A TV that drops or reboots
/// rejoins at the wall's position; a playlist starts each item the same way. How and why:
/// docs/sync.md. Isolation: an actor; the TVs' calls run outside it, one task per TV.
package actor VideoWall {
    package struct MemberReport: Sendable {
        package var id: String
        package var name: String
        /// The one-way delay planned with, and the floor measured (seconds).
        package var delay: Double
        package var floor: Double
        package var startLatency: Double
        /// When the PLAY was to go, and how late it was written to the wire (seconds after the plan).
        package var sendOffset: Double
        package var late: Double
        package var loadTime: Double
    }

    package struct StartReport: Sendable {
        /// Monotonic instant, and the same instant on the wall clock (Unix nanoseconds).
        package var start: Double
        package var startUnixNanoseconds: Int64
        package var position: Double
        package var item: Int
        package var members: [MemberReport]
        /// TVs that could not be loaded for this start (they rejoin when they can).
        package var missing: [String: String]
    }

    enum Phase: String, Sendable {
        case loading, playing, correcting, lost, rejoining, finished, left
    }

    struct MemberState: Sendable {
        var delays = RoundTripFilter()
        var errors = PositionErrorFilter(capacity: 12)
        var phase = Phase.loading
        var loadTime: Double?
        var mediaSessionID: Int?
        var lastError: Double?
        var lastReadingAt: Double?
        /// The start latency this start was planned with; nil once a reading taught it.
        var plannedLatency: Double?
        var settleUntil = 0.0
        /// Readings of polls sent before this instant are stale (monotonic seconds).
        var validFrom = 0.0
        var nudges = 0, seeks = 0, rejoins = 0
        var note: String?
    }

    package nonisolated let name: String
    private(set) var members: [any WallMember]
    let items: [WallItem]
    let repeats: Bool
    let policy: SyncPolicy
    let log: Logger
    let clock: @Sendable () -> Double
    package private(set) var calibration: SyncCalibration
    let calibrationChanged: @Sendable (SyncCalibration) -> Void

    var states: [String: MemberState] = [:]
    var timeline: WallTimeline?
    var itemIndex = 0
    var itemDuration: Double?
    var generation = 0
    var loops: [Task<Void, Never>] = []
    package private(set) var stopped = false
    package private(set) var ended: String?
    var lastStart: StartReport?

    package init(name: String, members: [any WallMember], items: [WallItem], repeats: Bool = false, policy: SyncPolicy = SyncPolicy(),
                 calibration: SyncCalibration = SyncCalibration(), logSystem: LogSystem = .shared,
                 clock: @escaping @Sendable () -> Double,
                 calibrationChanged: @escaping @Sendable (SyncCalibration) -> Void = { _ in }) {
        self.name = name
        self.members = members
        self.items = items
        self.repeats = repeats
        self.policy = policy
        self.calibration = calibration
        self.clock = clock
        self.calibrationChanged = calibrationChanged
        log = Logger(class: "VideoWall", system: logSystem).with(["wall": .string(name)])
        for member in members { states[member.id] = MemberState() }
    }

    // MARK: Start

    /// Starts item `item` at `position` on every TV and begins holding them together. Throws when
    /// no TV could be loaded.
    package func start(item: Int = 0, position: Double = 0) async throws(WallError) -> StartReport {
        guard items.indices.contains(item) else { throw WallError("no item \(item)") }
        guard !stopped else { throw WallError("the wall has ended (\(ended ?? "stopped"))") }
        generation += 1
        let generation = self.generation
        for loop in loops { loop.cancel() }
        loops = []
        itemIndex = item
        itemDuration = nil
        timeline = nil
        let wanted = items[item]
        let active = members.filter { states[$0.id]?.phase != .left }
        log.info("starting \(wanted.url) on \(active.count) TV(s) at \(position) s", [
            "item": .int(Int64(item)), "url": .string(wanted.url), "devices": .int(Int64(active.count)),
        ])
        // 1. Loaded and paused everywhere.
        var missing: [String: String] = [:]
        let loads = await withTaskGroup(of: (String, Result<Double, WallError>).self) { group in
            for member in active {
                group.addTask { [clock, policy] in
                    let began = clock()
                    do throws(WallError) {
                        try await member.load(wanted, position: position, timeout: policy.loadTimeout)
                        return (member.id, .success(clock() - began))
                    } catch {
                        return (member.id, .failure(error))
                    }
                }
            }
            var results: [(String, Result<Double, WallError>)] = []
            for await result in group { results.append(result) }
            return results
        }
        var loaded: [any WallMember] = []
        for (id, result) in loads {
            switch result {
            case .success(let seconds):
                states[id]?.loadTime = seconds
                states[id]?.phase = .loading
                loaded.append(active.first { $0.id == id }!)
            case .failure(let error):
                missing[id] = error.message
                states[id]?.phase = .lost
                states[id]?.note = error.message
                log.warning("\(memberName(id)) could not be loaded for the start: \(error)", ["device": .string(id), "reason": .string(error.message)])
            }
        }
        guard !loaded.isEmpty, generation == self.generation else {
            throw WallError("no TV of the wall could be loaded: " + missing.sorted { $0.key < $1.key }.map { "\(memberName($0.key)): \($0.value)" }.joined(separator: "; "))
        }
        // 2. Each TV's delay, measured on its warm session.
        let probes = await withTaskGroup(of: (String, [RoundTripFilter.Sample], MediaStatus?).self) { group in
            for member in loaded {
                group.addTask { [clock, policy] in await Self.probe(member, count: policy.probes, spacing: policy.probeSpacing, clock: clock) }
            }
            var results: [(String, [RoundTripFilter.Sample], MediaStatus?)] = []
            for await result in group { results.append(result) }
            return results
        }
        var plan: [StartPlan.Member] = []
        for (id, samples, status) in probes {
            var delays = RoundTripFilter()
            for sample in samples { delays.add(sample) }
            states[id]?.delays = delays
            states[id]?.errors.reset()
            states[id]?.mediaSessionID = status?.mediaSessionID
            let member = loaded.first { $0.id == id }!
            guard let typical = delays.typical else {
                missing[id] = "no answer to GET_STATUS"
                states[id]?.phase = .lost
                continue
            }
            let latency = calibration.startLatency(device: id, model: member.model)
            states[id]?.plannedLatency = latency
            plan.append(StartPlan.Member(id: id, delay: typical, startLatency: latency))
        }
        guard !plan.isEmpty, generation == self.generation else { throw WallError("no TV of the wall answered GET_STATUS") }
        // 3. One instant; each PLAY sent so that its first frame lands on it.
        let (start, sends) = StartPlan.plan(plan, now: clock(), lead: policy.lead)
        timeline = WallTimeline(instant: start, position: position)
        let sent = await withTaskGroup(of: (String, Double).self) { group in
            for member in loaded {
                guard let at = sends[member.id] else { continue }
                group.addTask { [clock] in
                    await Self.sleep(until: at, clock: clock)
                    let called = clock()
                    // Late by when it reached the wire, where the session says so.
                    let written = await member.play() ?? called
                    return (member.id, written - at)
                }
            }
            var results: [(String, Double)] = []
            for await result in group { results.append(result) }
            return results
        }
        var reports: [MemberReport] = []
        for (id, late) in sent {
            guard let planned = plan.first(where: { $0.id == id }) else { continue }
            states[id]?.phase = .playing
            states[id]?.settleUntil = start + policy.settlingTime
            reports.append(MemberReport(id: id, name: memberName(id), delay: planned.delay, floor: states[id]?.delays.floor ?? planned.delay,
                                        startLatency: planned.startLatency, sendOffset: sends[id]! - start, late: late,
                                        loadTime: states[id]?.loadTime ?? 0))
        }
        reports.sort { $0.name < $1.name }
        let report = StartReport(start: start, startUnixNanoseconds: Self.unixNanoseconds(start, clock: clock), position: position,
                                 item: item, members: reports, missing: missing)
        lastStart = report
        log.info("started at \(report.startUnixNanoseconds) ns (Unix) on \(reports.count) TV(s); worst send lateness \(Self.ms(reports.map(\.late).max() ?? 0)) ms", [
            "startUnixNs": .int(report.startUnixNanoseconds), "devices": .int(Int64(reports.count)), "missing": .int(Int64(missing.count)),
        ])
        for member in members where states[member.id]?.phase != .left {
            loops.append(Task { [weak self] in await self?.keep(member, generation: generation) })
        }
        return report
    }

    /// `count` media GET_STATUS round trips, `spacing` apart, all in flight at once.
    static func probe(_ member: any WallMember, count: Int, spacing: Double,
                      clock: @escaping @Sendable () -> Double) async -> (String, [RoundTripFilter.Sample], MediaStatus?) {
        let first = clock()
        let results = await withTaskGroup(of: (RoundTripFilter.Sample, MediaStatus?)?.self) { group in
            for index in 0..<max(1, count) {
                group.addTask {
                    await sleep(until: first + Double(index) * spacing, clock: clock)
                    let sent = clock()
                    let (reading, wire) = await member.status()
                    let sample = wire ?? RoundTripFilter.Sample(sent: sent, received: clock())
                    switch reading {
                    case .status(let status): return (sample, status)
                    case .noMedia: return (sample, nil)
                    case .unreachable: return nil
                    }
                }
            }
            var samples: [(RoundTripFilter.Sample, MediaStatus?)] = []
            for await case let result? in group { samples.append(result) }
            return samples
        }
        return (member.id, results.map(\.0), results.compactMap(\.1).last)
    }

    // MARK: Holding together

    /// What one reading leads to.
    enum Step: Sendable, Equatable {
        case wait(Double)
        case correct(Correction)
        case rejoin
        case finished
        case leave(String)
    }

    /// What the task group of ``keep(_:generation:)`` yields: a poll is due, or a reading came.
    enum KeepEvent: Sendable {
        case due
        case reading(RoundTripFilter.Sample, WallReading)
    }

    /// Polls one TV until the wall stops or starts again, correcting it as the readings say.
    /// Polls go out on a fixed cadence whatever the TV's round trip (a TV 300 ms away still gives
    /// a reading every ``SyncPolicy/fastPollInterval``), at most 4 in flight.
    func keep(_ member: any WallMember, generation: Int) async {
        let clock = self.clock
        var failures = 0
        var interval = policy.fastPollInterval
        var nextPoll = clock() + interval
        await withTaskGroup(of: KeepEvent.self) { group in
            var inFlight = 0
            var timerPending = false
            while !Task.isCancelled, generation == self.generation, !stopped {
                if !timerPending {
                    let at = nextPoll
                    group.addTask { await Self.sleep(until: at, clock: clock); return .due }
                    timerPending = true
                }
                guard let event = await group.next(), !Task.isCancelled, generation == self.generation, !stopped else { break }
                switch event {
                case .due:
                    timerPending = false
                    nextPoll = clock() + interval
                    guard inFlight < 4 else { continue }
                    inFlight += 1
                    group.addTask {
                        let sent = clock()
                        let (reading, wire) = await member.status()
                        return .reading(wire ?? RoundTripFilter.Sample(sent: sent, received: clock()), reading)
                    }
                case .reading(let sample, let reading):
                    inFlight -= 1
                    switch record(member.id, reading, sample: sample) {
                    case .wait(let next):
                        failures = 0
                        interval = next
                    case .correct(let correction):
                        await apply(correction, to: member, generation: generation)
                        nextPoll = clock() + policy.fastPollInterval
                    case .rejoin:
                        failures += 1
                        let rejoined = await rejoin(member, generation: generation)
                        // Bounded retries: 1 s, 2 s, … 30 s apart while the TV stays away.
                        nextPoll = clock() + (rejoined ? policy.fastPollInterval : min(30, Double(failures)))
                    case .finished:
                        states[member.id]?.phase = .finished
                        group.cancelAll()
                        await itemFinished(generation: generation)
                        return
                    case .leave(let why):
                        states[member.id]?.phase = .left
                        states[member.id]?.note = why
                        log.warning("\(member.name) leaves the wall: \(why)", ["device": .string(member.id), "reason": .string(why)])
                        if members.allSatisfy({ states[$0.id]?.phase == .left }) { end("every TV left the wall") }
                        group.cancelAll()
                        return
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// Whether every TV playing in the wall has had its start latency measured since the start.
    package var measuredSinceStart: Bool {
        members.allSatisfy { member in
            guard let state = states[member.id], [.playing, .correcting].contains(state.phase) else { return true }
            return state.plannedLatency == nil
        }
    }

    /// Folds one reading into the TV's state and says what to do. Actor-isolated, no I/O.
    func record(_ id: String, _ reading: WallReading, sample: RoundTripFilter.Sample) -> Step {
        guard var state = states[id], let timeline else { return .wait(policy.pollInterval) }
        // Sent before the last correction, start or rejoin finished: it describes what was.
        guard sample.sent >= state.validFrom else { return .wait(policy.fastPollInterval) }
        defer { states[id] = state }
        let expected = timeline.position(at: sample.midpoint)
        switch reading {
        case .unreachable:
            state.phase = .lost
            return .rejoin
        case .noMedia:
            if let duration = itemDuration, expected >= duration - 1 { return .finished }
            state.phase = .lost
            return .rejoin
        case .status(let status):
            if let known = state.mediaSessionID, status.mediaSessionID != known {
                return .leave("another media session (\(status.mediaSessionID)) replaced the wall's (\(known))")
            }
            state.mediaSessionID = status.mediaSessionID
            if let duration = status.media?.duration, duration > 0, duration.isFinite { itemDuration = duration }
            state.delays.add(sample)
            state.lastReadingAt = sample.received
            switch status.playerState {
            case .idle:
                switch status.idleReason {
                case .finished?: return .finished
                case .error?:
                    state.phase = .lost
                    return .rejoin
                default: return .leave("the media was stopped (IDLE \(status.idleReason?.rawValue ?? "without a reason"))")
                }
            case .paused:
                return .leave("paused by another sender")
            case .playing:
                break
            default:
                // BUFFERING, LOADING: no position to trust yet.
                return .wait(policy.fastPollInterval)
            }
            let fast = sample.received < state.settleUntil
            let interval = fast ? policy.fastPollInterval : policy.pollInterval
            guard state.phase == .playing else { return .wait(interval) }
            state.errors.add(sample, position: status.currentTime, timeline: timeline)
            guard let estimate = state.errors.estimate(minimum: policy.readingsForDecision) else { return .wait(interval) }
            state.lastError = estimate.error
            if let planned = state.plannedLatency {
                // The first settled reading after a start: how late this TV's first frame really
                // was. Behind by e means its start latency was e longer than planned.
                state.plannedLatency = nil
                let member = members.first { $0.id == id }!
                calibration.learn(device: id, model: member.model, startLatency: planned - estimate.error, weight: policy.learningRate)
                calibrationChanged(calibration)
            }
            let rates = members.first { $0.id == id }?.rates ?? 0.5...2
            let correction = policy.correction(for: estimate.error, rates: rates)
            guard correction != .none else { return .wait(interval) }
            log.info("\(memberName(id)) is \(Self.ms(estimate.error)) ms \(estimate.error > 0 ? "ahead" : "behind"): \(Self.describe(correction))", [
                "device": .string(id), "errorMs": .double(Self.ms(estimate.error)), "roundTripMs": .double(Self.ms(estimate.roundTrip)),
            ])
            state.phase = .correcting
            return .correct(correction)
        }
    }

    func apply(_ correction: Correction, to member: any WallMember, generation: Int) async {
        switch correction {
        case .none:
            break
        case .nudge(let rate, let seconds):
            states[member.id]?.nudges += 1
            if await member.setRate(rate) {
                await Self.sleep(until: clock() + seconds, clock: clock)
                // Back to 1 even if the wall stopped or restarted meanwhile (this task cancelled): a
                // TV never stays nudged. Its own task, which that cancellation does not reach.
                _ = await Task { await member.setRate(1) }.value
            }
        case .seek:
            guard let timeline, let state = states[member.id] else { return }
            states[member.id]?.seeks += 1
            let planned = StartPlan.Member(id: member.id, delay: state.delays.typical ?? 0,
                                           startLatency: calibration.startLatency(device: member.id, model: member.model))
            _ = await member.seek(to: StartPlan.seekTarget(planned, timeline: timeline, now: clock()))
        }
        guard generation == self.generation else { return }
        states[member.id]?.errors.reset()
        states[member.id]?.validFrom = clock()
        states[member.id]?.settleUntil = clock() + policy.settlingTime
        if states[member.id]?.phase == .correcting { states[member.id]?.phase = .playing }
    }

    /// A TV that dropped, rebooted or lost its media comes back at the wall's position: loaded
    /// paused where the wall will be once it has loaded, then played at the instant the wall
    /// reaches that position (or, when the load took longer, seeked to where the wall is).
    func rejoin(_ member: any WallMember, generation: Int) async -> Bool {
        guard let timeline else { return false }
        states[member.id]?.phase = .rejoining
        guard await member.awaitReachable(timeout: 30), generation == self.generation, !stopped else {
            if generation == self.generation { states[member.id]?.phase = .lost }
            return false
        }
        let began = clock()
        let loadGuess = max(1, (states[member.id]?.loadTime ?? 3) * 1.5)
        let position = timeline.position(at: began + loadGuess + 0.5)
        if let duration = itemDuration, position >= duration - 1 { return false }
        do throws(WallError) {
            try await member.load(items[itemIndex], position: position, timeout: policy.loadTimeout)
        } catch {
            log.warning("\(member.name) could not rejoin: \(error)", ["device": .string(member.id), "reason": .string(error.message)])
            states[member.id]?.phase = .lost
            return false
        }
        guard generation == self.generation, !stopped else { return false }
        let (_, samples, status) = await Self.probe(member, count: max(3, policy.probes / 2), spacing: policy.probeSpacing, clock: clock)
        var delays = RoundTripFilter()
        for sample in samples { delays.add(sample) }
        let planned = StartPlan.Member(id: member.id, delay: delays.typical ?? 0,
                                       startLatency: calibration.startLatency(device: member.id, model: member.model))
        let send = timeline.instant(showing: position) - planned.delay - planned.startLatency
        if send > clock() + 0.02 {
            await Self.sleep(until: send, clock: clock)
            _ = await member.play()
        } else {
            _ = await member.seek(to: StartPlan.seekTarget(planned, timeline: timeline, now: clock()))
        }
        guard generation == self.generation else { return false }
        states[member.id]?.delays = delays
        states[member.id]?.mediaSessionID = status?.mediaSessionID
        states[member.id]?.errors.reset()
        states[member.id]?.validFrom = clock()
        states[member.id]?.rejoins += 1
        states[member.id]?.phase = .playing
        states[member.id]?.settleUntil = clock() + policy.settlingTime
        log.info("\(member.name) rejoined at \(Self.ms(position) / 1000) s after \(Self.ms(clock() - began)) ms", [
            "device": .string(member.id), "position": .double(position), "tookMs": .double(Self.ms(clock() - began)),
        ])
        return true
    }

    /// One TV finished the item: once every TV that is still on the wall has (or the wall's
    /// clock is 3 s past the item's end), the next item starts everywhere at once.
    func itemFinished(generation: Int) async {
        guard generation == self.generation else { return }
        let waiting = members.filter { [.playing, .correcting, .rejoining].contains(states[$0.id]?.phase ?? .left) }
        let overdue = itemDuration.flatMap { duration in timeline.map { $0.position(at: clock()) > duration + 3 } } ?? false
        guard waiting.isEmpty || overdue else { return }
        var next = itemIndex + 1
        if next >= items.count {
            guard repeats else {
                end("the last item finished")
                return
            }
            next = 0
        }
        for member in members where states[member.id]?.phase != .left { states[member.id]?.phase = .loading }
        let wall = self
        // Not from this TV's own task: a start cancels the tasks that keep the TVs.
        Task { do { _ = try await wall.start(item: next) } catch { await wall.end("item \(next + 1) could not start: \(error)") } }
    }

    // MARK: Stopping and views

    /// Stops holding the TVs together; what they play is left playing. Returns once every TV's
    /// task has ended, so a TV in the middle of a nudge is back at rate 1 (each of its requests
    /// is bounded by its timeout).
    package func stop(_ why: String = "stopped") async {
        end(why)
        let ending = endingLoops
        endingLoops = []
        for loop in ending { await loop.value }
    }

    /// The tasks ``end(_:)`` cancelled, for ``stop(_:)`` to wait for.
    var endingLoops: [Task<Void, Never>] = []

    func end(_ why: String) {
        guard !stopped else { return }
        stopped = true
        ended = why
        generation += 1
        for loop in loops { loop.cancel() }
        endingLoops += loops
        loops = []
        log.info("the wall ends: \(why)", ["reason": .string(why)])
    }

    package var deviceIDs: [String] { members.map(\.id) }

    /// A TV that joins a running wall (a job's device that connected late): it comes in at the
    /// wall's position, as a rejoining TV does.
    package func add(_ member: any WallMember) {
        guard !stopped, !members.contains(where: { $0.id == member.id }) else { return }
        members.append(member)
        var state = MemberState()
        state.phase = .lost
        states[member.id] = state
        log.info("\(member.name) joins the wall", ["device": .string(member.id)])
        let generation = self.generation
        loops.append(Task { [weak self] in await self?.keep(member, generation: generation) })
    }

    /// The wall as the API shows it: its timeline, and each TV's phase, last error and counts.
    package func snapshot() -> JSONValue {
        var object = JSONObject()
        object.append(key: "wall", value: .string(name))
        object.append(key: "state", value: .string(stopped ? "ended" : "running"))
        if let ended { object.append(key: "ended", value: .string(ended)) }
        object.append(key: "item", value: .int(Int64(itemIndex)))
        object.append(key: "items", value: .array(items.map { .string($0.url) }))
        if let timeline {
            object.append(key: "position", value: .double((timeline.position(at: clock()) * 1000).rounded() / 1000))
        }
        if let lastStart { object.append(key: "startedAtUnixNs", value: .int(lastStart.startUnixNanoseconds)) }
        object.append(key: "devices", value: .array(members.map { member in
            let state = states[member.id] ?? MemberState()
            var o = JSONObject()
            o.append(key: "device", value: .string(member.id))
            o.append(key: "name", value: .string(member.name))
            o.append(key: "phase", value: .string(state.phase.rawValue))
            // A TV the wall cannot read has no error to show: unknown, not the last one seen.
            let readable = [.playing, .correcting].contains(state.phase)
            o.append(key: "errorMs", value: readable ? state.lastError.map { .double(Self.ms($0)) } ?? .null : .null)
            o.append(key: "oneWayMs", value: state.delays.typical.map { .double(Self.ms($0)) } ?? .null)
            o.append(key: "startLatencyMs", value: .double(Self.ms(calibration.startLatency(device: member.id, model: member.model))))
            o.append(key: "nudges", value: .int(Int64(state.nudges)))
            o.append(key: "seeks", value: .int(Int64(state.seeks)))
            o.append(key: "rejoins", value: .int(Int64(state.rejoins)))
            if let note = state.note { o.append(key: "note", value: .string(note)) }
            return .object(o)
        }))
        return .object(object)
    }

    func memberName(_ id: String) -> String { members.first { $0.id == id }?.name ?? id }

    // MARK: Clocks

    static func sleep(until instant: Double, clock: @Sendable () -> Double) async {
        let wait = instant - clock()
        guard wait > 0, wait.isFinite else { return }
        try? await Task.sleep(nanoseconds: UInt64(min(wait, 86_400) * 1e9))
    }

    /// `instant` (on `clock`, monotonic) on the wall clock, in Unix nanoseconds.
    static func unixNanoseconds(_ instant: Double, clock: @Sendable () -> Double) -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let realtime = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        return Int64(((realtime + (instant - clock())) * 1e9).rounded())
    }

    static func ms(_ seconds: Double) -> Double { (seconds * 10_000).rounded() / 10 }

    static func describe(_ correction: Correction) -> String {
        switch correction {
        case .none: return "nothing to do"
        case .nudge(let rate, let seconds): return "rate \((rate * 10_000).rounded() / 10_000) for \(ms(seconds)) ms"
        case .seek: return "seek"
        }
    }
}
