internal import CCastPluginABI
import CastCore
import CastLogging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The `castline_host_services` table every plugin receives: C functions that find the calling
/// instance by its handle and act for it. One static table for the process.
package enum HostServices {
    nonisolated(unsafe) static let table: UnsafeMutablePointer<castline_host_services> = {
        let t = UnsafeMutablePointer<castline_host_services>.allocate(capacity: 1)
        t.initialize(to: castline_host_services(
            version: PluginABI.minor,
            struct_size: UInt32(MemoryLayout<castline_host_services>.size),
            log: { ctx, level, className, message, fields, fieldCount, file, line, function in
                HostServices.log(ctx, level, className, message, fields, fieldCount, file, line, function)
            },
            level_enabled: { ctx, level, className in
                guard let context = PluginHostContext.lookup(ctx),
                      let level = LogLevel(rawValue: UInt8(clamping: max(level, 0))), level != .none,
                      let name = HostServices.string(context, className, limit: PluginMemory.Limit.name, what: "level_enabled's class name") else { return 0 }
                return context.logger(forClass: name).isEnabled(level) ? 1 : 0
            },
            send_message: { ctx, namespace, destination, payload in
                HostServices.send(ctx, namespace, destination, payload)
            },
            complete_command: { ctx, commandID, status, text in
                HostServices.complete(ctx, commandID, status, text)
            },
            timer_start: { ctx, delay, repeatMs, fire, user in
                guard let context = PluginHostContext.lookup(ctx), let fire else { return 0 }
                let call = CCallback(fire: fire, user: user)
                return context.startTimer(delayMs: delay, repeatMs: repeatMs) { call.invoke() }
            },
            timer_cancel: { ctx, id in
                PluginHostContext.lookup(ctx)?.cancelTimer(id)
            },
            device_found: { ctx, json in
                HostServices.deviceFound(ctx, json)
            },
            device_lost: { ctx, id in
                guard let context = PluginHostContext.lookup(ctx), case .discovery(let callbacks) = context.role else {
                    return Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue)
                }
                guard let id = HostServices.string(context, id, limit: PluginMemory.Limit.text, what: "device_lost's id") else {
                    return Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue)
                }
                callbacks.lost(id)
                return Int32(CASTLINE_OK.rawValue)
            },
            discovery_problem: { ctx, problem in
                guard let context = PluginHostContext.lookup(ctx), case .discovery(let callbacks) = context.role else {
                    return Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue)
                }
                callbacks.problem(problem == nil ? nil : HostServices.string(context, problem, limit: PluginMemory.Limit.text, what: "discovery_problem's text") ?? "(unreadable text)")
                return Int32(CASTLINE_OK.rawValue)
            },
            control_request: { ctx, requestID, json in
                HostServices.controlRequest(ctx, requestID, json)
            },
            events_subscribe: { ctx, kinds in
                guard let context = PluginHostContext.lookup(ctx), case .bridge(let callbacks) = context.role else {
                    return Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue)
                }
                let text = kinds == nil ? nil : HostServices.string(context, kinds, limit: PluginMemory.Limit.text, what: "events_subscribe's kinds")
                if kinds != nil, text == nil { return Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue) }
                let list = text.flatMap { $0.isEmpty ? nil : $0.split(separator: ",").map(String.init) }
                return callbacks.subscribe(list)
            }))
        return t
    }()

    /// `CASTLINE_OK`.
    package static let ok = Int32(CASTLINE_OK.rawValue)
    static let invalidArgument = Int32(CASTLINE_ERR_INVALID_ARGUMENT.rawValue)
    static let invalidJSON = Int32(CASTLINE_ERR_INVALID_JSON.rawValue)
    /// `CASTLINE_ERR_UNDECLARED`.
    package static let undeclared = Int32(CASTLINE_ERR_UNDECLARED.rawValue)
    static let notConnected = Int32(CASTLINE_ERR_NOT_CONNECTED.rawValue)
    static let failed = Int32(CASTLINE_ERR_FAILED.rawValue)

    private static func log(_ ctx: OpaquePointer?, _ level: Int32, _ className: UnsafePointer<CChar>?,
                            _ message: UnsafePointer<CChar>?, _ fields: UnsafePointer<castline_field>?, _ fieldCount: Int,
                            _ file: UnsafePointer<CChar>?, _ line: UInt32, _ function: UnsafePointer<CChar>?) {
        guard let context = PluginHostContext.lookup(ctx),
              let level = LogLevel(rawValue: UInt8(clamping: max(level, 0))), level != .none else { return }
        if case .logSink = context.role {
            // A sink logging through the host would feed itself; dropped, and said once.
            if context.noteSinkLogging() {
                context.hostLog.warning("a log sink called the host's log service; such records are dropped (they would loop back into the sink)",
                                        ["feature": .string(context.featureID ?? "")])
            }
            return
        }
        let name = className == nil ? context.pluginID
            : string(context, className, limit: PluginMemory.Limit.name, what: "log's class name") ?? context.pluginID
        let logger = context.logger(forClass: name.isEmpty ? context.pluginID : name)
        guard logger.isEnabled(level) else { return }
        var recordFields = LogFields()
        recordFields["plugin"] = .string(context.pluginID)
        let count = min(fieldCount, 64)
        if count > 0 {
            // The array itself is checked: a count past its end reads nothing.
            guard let raw = PluginMemory.bytes(fields.map(UnsafeRawPointer.init), count: count * MemoryLayout<castline_field>.stride) else {
                problem(context, "log's fields (\(fieldCount) declared) are not readable memory; the record is dropped")
                return
            }
            for i in 0..<count {
                let f = raw.withUnsafeBytes { $0.load(fromByteOffset: i * MemoryLayout<castline_field>.stride, as: castline_field.self) }
                guard let key = string(context, f.key, limit: PluginMemory.Limit.name, what: "a log field's key") else { continue }
                recordFields[key] = value(of: f, context: context)
            }
        }
        let text = { (p: UnsafePointer<CChar>?, limit: Int, what: String) in p == nil ? "" : string(context, p, limit: limit, what: what) ?? "" }
        let record = LogRecord(
            level: level, className: logger.className, function: text(function, PluginMemory.Limit.text, "log's function"),
            file: text(file, PluginMemory.Limit.text, "log's file"), line: UInt(line),
            message: text(message, PluginMemory.Limit.message, "log's message"), fields: recordFields)
        if notesRecordsForCrashes.load(ordering: .relaxed) { ForwardingLogSink.noteForCrash(record) }
        context.logSystem.submit(record)
    }

    /// In a plugin's helper process: each record the plugin logs is also kept for the crash
    /// report (its last records reach the host even when a crash takes the sink's queue with it).
    static let notesRecordsForCrashes = Atomic(false)

    static func value(of f: castline_field, context: PluginHostContext) -> LogValue {
        switch f.value_type {
        case Int32(CASTLINE_VALUE_INT.rawValue): return .int(f.int_value)
        case Int32(CASTLINE_VALUE_DOUBLE.rawValue): return .double(f.double_value)
        case Int32(CASTLINE_VALUE_BOOL.rawValue): return .bool(f.int_value != 0)
        default: return .string(f.string == nil ? "" : string(context, f.string, limit: PluginMemory.Limit.message, what: "a log field's string") ?? "")
        }
    }

    /// A string a plugin handed over, read safely and bounded (``PluginMemory``); nil, with one
    /// error record naming the plugin and the problem, when it is NULL, unreadable or has no NUL
    /// within `limit`.
    static func string(_ context: PluginHostContext, _ pointer: UnsafePointer<CChar>?, limit: Int, what: String) -> String? {
        switch PluginMemory.string(pointer, limit: limit) {
        case .success(let text): return text
        case .failure(let failure):
            problem(context, "\(what) is \(failure); refused")
            return nil
        }
    }

    /// An error record about what a plugin passed through a host service (rate-limited per
    /// instance: the first, then one a minute with the count).
    static func problem(_ context: PluginHostContext, _ text: String) {
        guard let suppressed = context.admitProblem() else { return }
        context.hostLog.error("plugin \(context.pluginID)\(context.featureID.map { "/" + $0 } ?? ""): \(text)"
                              + (suppressed > 0 ? " (\(suppressed) more such problems since the last report)" : ""),
                              ["plugin": .string(context.pluginID), "feature": .string(context.featureID ?? ""), "problem": "bad_argument"])
    }

    /// Parses the NUL-terminated JSON a plugin handed over; logs one error naming the plugin and
    /// the offset when it is not JSON.
    static func parseJSON(_ context: PluginHostContext, _ text: UnsafePointer<CChar>?, what: String) -> JSONValue? {
        parseJSONText(context, text, what: what)?.value
    }

    /// ``parseJSON(_:_:what:)`` with the text as the plugin wrote it.
    static func parseJSONText(_ context: PluginHostContext, _ text: UnsafePointer<CChar>?, what: String) -> (value: JSONValue, text: String)? {
        let bytes: [UInt8]
        switch PluginMemory.bytesOfString(text, limit: PluginMemory.Limit.json) {
        case .success(let read): bytes = read
        case .failure(let failure):
            problem(context, "\(what) is \(failure); refused")
            return nil
        }
        do {
            return (try JSONValue.parse(bytes: bytes), String(decoding: bytes, as: UTF8.self))
        } catch {
            context.hostLog.error("\(what) from plugin \(context.pluginID) is not valid JSON (\(error)); refused",
                                  ["plugin": .string(context.pluginID), "feature": .string(context.featureID ?? ""),
                                   "preview": .string(PluginMemory.printable(bytes))])
            return nil
        }
    }

    private static func deviceFound(_ ctx: OpaquePointer?, _ json: UnsafePointer<CChar>?) -> Int32 {
        guard let context = PluginHostContext.lookup(ctx), case .discovery(let callbacks) = context.role else { return invalidArgument }
        guard let value = parseJSON(context, json, what: "device_found JSON") else { return invalidJSON }
        if let problem = callbacks.found(value) {
            context.hostLog.error("device_found from plugin \(context.pluginID) refused: \(problem)", ["feature": .string(context.featureID ?? "")])
            return invalidArgument
        }
        return ok
    }

    private static func controlRequest(_ ctx: OpaquePointer?, _ requestID: UInt64, _ json: UnsafePointer<CChar>?) -> Int32 {
        guard let context = PluginHostContext.lookup(ctx), case .bridge(let callbacks) = context.role else { return invalidArgument }
        guard let value = parseJSON(context, json, what: "control request") else { return invalidJSON }
        guard case .object = value else {
            context.hostLog.error("control request from plugin \(context.pluginID) is not a JSON object; refused", ["feature": .string(context.featureID ?? "")])
            return invalidArgument
        }
        return callbacks.request(requestID, value)
    }

    private static func send(_ ctx: OpaquePointer?, _ namespace: UnsafePointer<CChar>?, _ destination: UnsafePointer<CChar>?,
                             _ payload: UnsafePointer<CChar>?) -> Int32 {
        guard let context = PluginHostContext.lookup(ctx), case .channel(let callbacks) = context.role,
              let ns = string(context, namespace, limit: 128, what: "send_message's namespace") else {
            return invalidArgument
        }
        guard context.declaredNamespaces.contains(ns) else {
            context.hostLog.error("channel \(context.pluginID)/\(context.featureID ?? "") tried to send on undeclared namespace \(ns); refused (declared: \(context.declaredNamespaces.sorted().joined(separator: ", ")))",
                                  ["feature": .string(context.featureID ?? ""), "namespace": .string(ns)])
            return undeclared
        }
        guard let json = parseJSONText(context, payload, what: "message on \(ns)") else { return invalidJSON }
        let target = destination == nil ? nil : string(context, destination, limit: PluginMemory.Limit.name, what: "send_message's destination")
        if destination != nil, target == nil { return invalidArgument }
        return callbacks.send(ns, target, json.text)
    }

    private static func complete(_ ctx: OpaquePointer?, _ id: UInt64, _ status: Int32, _ text: UnsafePointer<CChar>?) -> Int32 {
        guard let context = PluginHostContext.lookup(ctx), case .channel(let callbacks) = context.role else { return invalidArgument }
        let result: Result<JSONValue, PluginCommandError>
        if status == ok {
            guard let value = parseJSON(context, text, what: "command result") else {
                _ = callbacks.complete(id, .failure(PluginCommandError("the plugin answered with invalid JSON")))
                return invalidJSON
            }
            result = .success(value)
        } else {
            let reason = text == nil ? "failed" : string(context, text, limit: PluginMemory.Limit.text, what: "complete_command's error text") ?? "failed (the plugin's error text was unreadable)"
            result = .failure(PluginCommandError(reason))
        }
        return callbacks.complete(id, result) ? ok : invalidArgument
    }
}

/// A C callback and its user pointer, carried into a Swift closure.
struct CCallback: @unchecked Sendable {
    let fire: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let user: UnsafeMutableRawPointer?
    func invoke() { fire(user) }
}

/// The error buffer the host hands to plugin calls, read back as a String. Sendable: one call
/// writes it (on the instance's queue) and it is read only after that call returned.
final class PluginErrorText: @unchecked Sendable {
    static let capacity = 512
    let storage = UnsafeMutablePointer<CChar>.allocate(capacity: PluginErrorText.capacity)
    init() { storage.initialize(repeating: 0, count: Self.capacity) }
    deinit { storage.deallocate() }
    var buffer: castline_error_buffer { castline_error_buffer(text: storage, capacity: Self.capacity) }
    var text: String? {
        storage[Self.capacity - 1] = 0
        let s = String(cString: storage)
        return s.isEmpty ? nil : s
    }
}
