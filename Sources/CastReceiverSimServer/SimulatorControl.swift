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
public struct SimulatorControl: Sendable {
    let devices: [SimulatedDevice]
    let loop: EventLoop
    let log: Logger

    init(devices: [SimulatedDevice], loop: EventLoop, logSystem: LogSystem) {
        self.devices = devices
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
                                                         + "fail-next-load, stop-app, reboot, outage, transfer, malformed)"))
        }
        let targets: [SimulatedDevice]
        do { targets = try select(command["device"]) } catch {
            return loop.makeSucceededFuture(Self.failure("\(error)"))
        }
        log.info("control: \(name) on \(targets.count) device(s)", ["command": .string(name)])
        switch name {
        case "list":
            return all(targets) { device in device.listing() }.map { ["ok": true, "devices": .array($0)] }
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
            return EventLoopFuture.andAllSucceed(futures, on: loop).map { Self.success }.recover { Self.failure("\($0)") }
        case "transfer":
            return transfer(from: targets, to: command["to"])
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
        let matches = devices.filter { $0.configuration.uuid == wanted || $0.configuration.name == text }
        guard !matches.isEmpty else { throw .control("no device named or with uuid \"\(text)\"") }
        return matches
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
