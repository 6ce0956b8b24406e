import CastCore
import CastLogging
import CastProtocol
import CastReceiverSim
import NIOCore

/// Run-time control of a running simulator: list sessions, push messages, inject faults.
///
/// Commands are JSON objects `{"command": …, "device": <index | uuid | name | "all">, …}`; the
/// reply is `{"ok": true, …}` or `{"ok": false, "error": "…"}`. Used by the control socket
/// (``ControlSocketServer``, one JSON object per line) and directly by tests. Thread-safe: each
/// device's work runs on its own event loop.
///
/// | command | arguments | effect |
/// |---|---|---|
/// | `list` | | devices, their connections, sessions, media state, faults |
/// | `push` | `namespace`, `payload` (JSON) | message to the senders connected to the app (or `receiver-0`) |
/// | `drop` | `after`? (s) | close every connection now, or after N s (also every later connection) |
/// | `ignore-pings` | `enabled` (default true) | stop (or resume) answering PING |
/// | `delay` | `seconds` | send every reply that late (0 = off) |
/// | `fail-next-load` | `code` (detailedErrorCode, default 104) | next LOAD → LOAD_FAILED |
/// | `stop-app` | | stop the running app as if another sender did |
/// | `reboot` | `downFor` (s, default 2) | every connection gone, listeners closed, back after N s |
/// | `outage` | `downFor` (s, default 2) | like reboot, but the app and media keep running (a network drop) |
/// | `transfer` | `to` (device) | move the running session to another device |
/// | `malformed` | `kind`: `garbage`, `oversized`, `zero-length`, `invalid-json`, `unknown-namespace` | send a bad frame to every sender |
/// | `group-leader` | `group`, `leader`? (device; default the next member) | move the group's endpoint to another member |
/// | `group-add` / `group-remove` | `group`, `device` | a member joins / leaves the group |
/// | `member-cast` | `device`, `appId`? (default `CC1AD845`) | the device casts on its own: it leaves its groups' playback |
/// | `cover` / `uncover` | | ambient mode or a screensaver covers the screen (the app runs on) / lifts |
/// | `standby` | `enabled` (default true) | the TV goes to standby (false: on again) |
/// | `input` | `active` (default false) | the TV shows another HDMI input (true: this one again) |
/// | `launch-hang` | `count` (default 1) | the next LAUNCHes are never answered |
/// | `latency` | `base_ms`, `jitter_ms` (0…10000, default 0) | every CASTV2 message, both ways, that much later (0/0: off) |
/// | `first-frame` | `base_ms`, `jitter_ms` (0…10000, default 0) | the playhead moves that long after it is set moving |
/// | `clock-drift` | `ppm` (−10000…10000) | the device clock runs that much fast (negative: slow) |
///
/// `device` also selects a group's endpoint by its uuid or name (`push`, `stop-app`, `drop`, …).
public struct SimulatorControl: Sendable {
    let devices: [SimulatedDevice]
    let groups: GroupCoordinator
    let loop: EventLoop
    let log: Logger

    init(devices: [SimulatedDevice], groups: GroupCoordinator, loop: EventLoop, logSystem: LogSystem) {
        self.devices = devices
        self.groups = groups
        self.loop = loop
        log = Logger(class: "SimulatorControl", system: logSystem)
    }

    /// Executes one command text (a JSON object).
    public func execute(text: String) -> EventLoopFuture<JSONValue> {
        do {
            return execute(try JSONValue.parse(text))
        } catch {
            return loop.makeSucceededFuture(Self.failure("\(error)"))
        }
    }

    /// Executes one command.
    public func execute(_ command: JSONValue) -> EventLoopFuture<JSONValue> {
        guard let name = command["command"]?.string else {
            return loop.makeSucceededFuture(Self.failure("missing \"command\" (list, push, drop, ignore-pings, delay, "
                                                         + "fail-next-load, stop-app, reboot, outage, transfer, malformed, "
                                                         + "group-leader, group-add, group-remove, member-cast, cover, uncover, "
                                                         + "standby, input, launch-hang, latency, first-frame, clock-drift)"))
        }
        if let groupCommand = groupCommand(name, command) { return groupCommand }
        let targets: [SimulatedDevice]
        do { targets = try select(command["device"]) } catch {
            return loop.makeSucceededFuture(Self.failure("\(error)"))
        }
        log.info("control: \(name) on \(targets.count) device(s)", ["command": .string(name)])
        switch name {
        case "list":
            let groups = command["device"] == nil ? self.groups.listing() : loop.makeSucceededFuture([])
            return all(targets) { device in device.listing() }.and(groups).map { devices, groups in
                ["ok": true, "devices": .array(devices), "groups": .array(groups)]
            }
        case "push":
            guard let namespace = command["namespace"]?.string, let payload = command["payload"] else {
                return loop.makeSucceededFuture(Self.failure("push needs \"namespace\" and \"payload\""))
            }
            return all(targets) { device -> JSONValue in
                device.mutateState { state, now in state.push(namespace: CastNamespace(namespace), payload: payload, now: now) }
                return .null
            }.map { _ in Self.success }
        case "drop":
            let after = command["after"]?.double
            return all(targets) { device -> JSONValue in device.drop(after: after); return .null }.map { _ in Self.success }
        case "ignore-pings":
            let enabled = command["enabled"]?.bool ?? true
            return all(targets) { device -> JSONValue in device.faults.ignorePings = enabled; return .null }.map { _ in Self.success }
        case "delay":
            let seconds = max(0, command["seconds"]?.double ?? 0)
            return all(targets) { device -> JSONValue in device.faults.replyDelay = seconds; return .null }.map { _ in Self.success }
        case "fail-next-load":
            let code = DetailedErrorCode(rawValue: Int(command["code"]?.int ?? 104))
            return all(targets) { device -> JSONValue in
                device.mutateState { state, _ in state.failNextLoad(code); return [] }
                return .null
            }.map { _ in Self.success }
        case "stop-app":
            return all(targets) { device -> JSONValue in
                device.mutateState { state, now in state.stopRunningApp(now: now) }
                return .null
            }.map { _ in Self.success }
        case "reboot", "outage":
            let downFor = max(0, command["downFor"]?.double ?? 2)
            let futures = targets.map { name == "reboot" ? $0.reboot(downFor: downFor) : $0.outage(downFor: downFor) }
            let promise = loop.makePromise(of: Void.self)
            let groups = self.groups
            let indexes = targets.compactMap { target in devices.firstIndex { $0 === target } }
            let rebooted = name == "reboot"
            promise.completeWithTask {
                // A group whose leader went away elects the next member.
                for index in indexes { await groups.leaderWentDown(index, rebooted: rebooted) }
            }
            return EventLoopFuture.andAllSucceed(futures, on: loop).flatMap { promise.futureResult }
                .map { Self.success }.recover { Self.failure("\($0)") }
        case "transfer":
            return transfer(from: targets, to: command["to"])
        case "cover", "uncover":
            let covered = name == "cover"
            return mutateAll(targets) { state, now in state.cover(covered, now: now) }
        case "standby":
            let enabled = command["enabled"]?.bool ?? true
            return mutateAll(targets) { state, now in state.setStandby(enabled, now: now) }
        case "input":
            let active = command["active"]?.bool ?? false
            return mutateAll(targets) { state, now in state.setOtherInput(!active, now: now) }
        case "launch-hang":
            let count = Int(max(0, min(command["count"]?.int ?? 1, 1_000_000)))
            return mutateAll(targets) { state, _ in state.hangLaunches(count); return [] }
        case "latency", "first-frame":
            let delay: JitteredDelay
            switch Self.delay(command, name) {
            case .success(let value): delay = value
            case .failure(let error): return loop.makeSucceededFuture(Self.failure(error.message))
            }
            if name == "latency" {
                return all(targets) { device -> JSONValue in
                    device.latency = delay
                    device.log.info("latency \(delay.base) s + up to \(delay.jitter) s per message",
                                    ["base": .double(delay.base), "jitter": .double(delay.jitter)])
                    return .null
                }.map { _ in Self.success }
            }
            return mutateAll(targets) { state, _ in state.setFirstFrame(delay); return [] }
        case "clock-drift":
            let bound = DeviceProfile.maximumClockDriftPPM
            guard let ppm = command["ppm"]?.double, ppm.isFinite, abs(ppm) <= bound else {
                return loop.makeSucceededFuture(Self.failure(
                    "clock-drift needs \"ppm\": a number in -\(Int(bound))…\(Int(bound)), found \(command["ppm"].map { "\($0)" } ?? "nothing")"))
            }
            return mutateAll(targets) { state, now in state.setClockDrift(ppm: ppm, now: now) }
        case "flood":
            let rate = Int(max(1, min(command["rate"]?.int ?? 10_000, 1_000_000)))
            let seconds = max(0.01, min(command["seconds"]?.double ?? 5, 600))
            return all(targets) { device -> JSONValue in .int(Int64(device.flood(rate: rate, seconds: seconds))) }
                .map { counts in ["ok": true, "senders": .int(counts.reduce(0) { $0 + ($1.int ?? 0) })] }
        case "malformed":
            guard let kind = MalformedFrame(rawValue: command["kind"]?.string ?? "") else {
                return loop.makeSucceededFuture(Self.failure(
                    "malformed needs \"kind\": " + MalformedFrame.allCases.map(\.rawValue).joined(separator: ", ")))
            }
            return all(targets) { device -> JSONValue in .int(Int64(device.sendMalformed(kind))) }
                .map { counts in ["ok": true, "sent": .int(counts.reduce(0) { $0 + ($1.int ?? 0) })] }
        default:
            return loop.makeSucceededFuture(Self.failure("unknown command \"\(name)\""))
        }
    }

    private func transfer(from sources: [SimulatedDevice], to target: JSONValue?) -> EventLoopFuture<JSONValue> {
        guard sources.count == 1, let source = sources.first else {
            return loop.makeSucceededFuture(Self.failure("transfer needs exactly one source \"device\""))
        }
        guard let target, let destinations = try? select(target), destinations.count == 1, let destination = destinations.first,
              destination !== source else {
            return loop.makeSucceededFuture(Self.failure("transfer needs one \"to\" device other than the source"))
        }
        return source.onLoop { device -> TransferredSession? in
            device.readState { state, now in state.exportSession(now: now) }
        }.flatMap { session -> EventLoopFuture<JSONValue> in
            guard let session else { return self.loop.makeSucceededFuture(Self.failure("no session to transfer")) }
            return destination.onLoop { device in
                device.mutateState { state, now in state.importSession(session, now: now) }
            }.flatMap {
                source.onLoop { device in device.mutateState { state, now in state.stopRunningApp(now: now) } }
            }.map { Self.success }
        }
    }

    /// The group commands; nil for any other command.
    private func groupCommand(_ name: String, _ command: JSONValue) -> EventLoopFuture<JSONValue>? {
        let groups = self.groups
        let work: (@Sendable () async throws -> JSONValue)
        switch name {
        case "group-leader": work = { try await groups.moveLeader(group: command["group"], to: command["leader"]) }
        case "group-add": work = { try await groups.addMember(group: command["group"], device: command["device"]) }
        case "group-remove": work = { try await groups.removeMember(group: command["group"], device: command["device"]) }
        case "member-cast":
            let appID = command["appId"]?.string ?? "CC1AD845"
            work = { try await groups.memberCast(device: command["device"], appID: appID) }
        default: return nil
        }
        log.info("control: \(name)", ["command": .string(name)])
        let promise = loop.makePromise(of: JSONValue.self)
        promise.completeWithTask {
            do { return try await work() } catch { return Self.failure("\(error)") }
        }
        return promise.futureResult
    }

    /// Runs `body` on each target's state machine and performs what it returns.
    private func mutateAll(_ targets: [SimulatedDevice],
                           _ body: @escaping @Sendable (inout ReceiverDevice, Double) -> [DeviceOutput]) -> EventLoopFuture<JSONValue> {
        all(targets) { device -> JSONValue in
            device.mutateState(body)
            return .null
        }.map { _ in Self.success }
    }

    private func all(_ targets: [SimulatedDevice], _ body: @escaping @Sendable (SimulatedDevice) -> JSONValue)
        -> EventLoopFuture<[JSONValue]> {
        EventLoopFuture.whenAllSucceed(targets.map { $0.onLoop(body) }, on: loop)
    }

    func select(_ selector: JSONValue?) throws(SimulatorError) -> [SimulatedDevice] {
        guard let selector, !selector.isNull else { return devices }
        if let index = selector.int {
            guard index >= 0, index < devices.count else {
                throw .control("no device \(index) (there are \(devices.count): 0…\(devices.count - 1))")
            }
            return [devices[Int(index)]]
        }
        guard let text = selector.string else { throw .control("\"device\" must be an index, uuid, name or \"all\"") }
        if text == "all" { return devices }
        let wanted = text.lowercased().replacingDashes()
        let matches = (devices + groups.endpoints).filter { $0.configuration.uuid == wanted || $0.configuration.name == text }
        guard !matches.isEmpty else { throw .control("no device named or with uuid \"\(text)\"") }
        return matches
    }

    /// `base_ms` and `jitter_ms` of `command` (each optional, default 0) as a delay.
    static func delay(_ command: JSONValue, _ name: String) -> Result<JitteredDelay, JitteredDelayError> {
        var parts: [Double] = []
        for key in ["base_ms", "jitter_ms"] {
            guard let value = command[key], !value.isNull else { parts.append(0); continue }
            guard let number = value.double else {
                return .failure(JitteredDelayError(message: "\(name): \(key) must be a number of milliseconds in 0…10000, found \(value)"))
            }
            parts.append(number)
        }
        return JitteredDelay.milliseconds(base: parts[0], jitter: parts[1])
            .mapError { JitteredDelayError(message: "\(name): \($0.message)") }
    }

    static let success: JSONValue = ["ok": true]

    static func failure(_ message: String) -> JSONValue { ["ok": false, "error": .string(message)] }
}

/// Bad frames the simulator can send on purpose.
public enum MalformedFrame: String, Sendable, CaseIterable {
    /// A valid length prefix followed by bytes that are not a CastMessage.
    case garbage
    /// A length prefix above the 65,536-byte limit (the body is never sent).
    case oversized
    /// A zero length prefix.
    case zeroLength = "zero-length"
    /// A well-formed CastMessage whose text payload is not JSON.
    case invalidJSON = "invalid-json"
    /// A well-formed message on a namespace nobody registered.
    case unknownNamespace = "unknown-namespace"
}

extension String {
    fileprivate func replacingDashes() -> String { String(filter { $0 != "-" }) }
}
