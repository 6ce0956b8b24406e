#if canImport(Glibc)
import Glibc
#endif
@_exported import CCastPluginABI
import Synchronization

/// Why a plugin call failed: the text the host shows in its one error line.
public struct PluginError: Error, Sendable, CustomStringConvertible {
    public var status: Int32
    public var reason: String
    public init(_ reason: String, status: Int32 = Int32(CASTLINE_ERR_FAILED.rawValue)) {
        self.reason = reason
        self.status = status
    }
    public var description: String { reason }
}

/// Log levels as the ABI numbers them (GCKLoggerLevel).
public enum PluginLogLevel: Int32, Sendable {
    case verbose = 1, debug = 2, info = 3, warning = 4, error = 5, assert = 6
}

/// A structured field value for ``PluginHostServices/log(_:class:_:fields:file:line:function:)``.
public enum PluginFieldValue: Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
}

/// The host's services as the plugin sees them: logging through castline's filter, sending on
/// declared namespaces, timers, device reports. Valid for the instance it was given to.
/// Thread-safe (the host's functions may be called from any thread).
public struct PluginHostServices: @unchecked Sendable {
    let table: UnsafePointer<castline_host_services>
    let ctx: OpaquePointer?

    init(table: UnsafePointer<castline_host_services>, ctx: OpaquePointer?) {
        self.table = table
        self.ctx = ctx
    }

    /// True when a record at `level` under `className` would be emitted.
    public func isEnabled(_ level: PluginLogLevel, class className: String) -> Bool {
        guard let f = table.pointee.level_enabled else { return true }
        return className.withCString { f(ctx, level.rawValue, $0) } != 0
    }

    /// Logs through the host's filter and sinks. `message` is built only when the level is enabled.
    public func log(_ level: PluginLogLevel, class className: String, _ message: @autoclosure () -> String,
                    fields: KeyValuePairs<String, PluginFieldValue> = [:],
                    file: String = #fileID, line: UInt = #line, function: String = #function) {
        guard let f = table.pointee.log, isEnabled(level, class: className) else { return }
        let text = message()
        // Keep every string alive while the C array points into them.
        let keys = fields.map { strdup($0.key)! }
        let values: [UnsafeMutablePointer<CChar>?] = fields.map { if case .string(let s) = $0.value { strdup(s) } else { nil } }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        var cFields: [castline_field] = []
        for (i, field) in fields.enumerated() {
            var c = castline_field(key: keys[i], key_length: strlen(keys[i]), value_type: 0, string: nil, string_length: 0,
                                   int_value: 0, double_value: 0)
            switch field.value {
            case .string: c.value_type = Int32(CASTLINE_VALUE_STRING.rawValue); c.string = UnsafePointer(values[i]); c.string_length = strlen(values[i]!)
            case .int(let v): c.value_type = Int32(CASTLINE_VALUE_INT.rawValue); c.int_value = v
            case .double(let v): c.value_type = Int32(CASTLINE_VALUE_DOUBLE.rawValue); c.double_value = v
            case .bool(let v): c.value_type = Int32(CASTLINE_VALUE_BOOL.rawValue); c.int_value = v ? 1 : 0
            }
            cFields.append(c)
        }
        className.withCString { cls in
            text.withCString { msg in
                file.withCString { fileC in
                    function.withCString { fn in
                        cFields.withUnsafeBufferPointer { f(ctx, level.rawValue, cls, msg, $0.baseAddress, $0.count, fileC, UInt32(clamping: line), fn) }
                    }
                }
            }
        }
    }

    /// Queues a JSON payload on a declared namespace for `destination`: nil (the joined app), the
    /// app's transport id, or "receiver-0"; anything else is refused. Returns the ABI status
    /// (`CASTLINE_ERR_NOT_CONNECTED` when no app runs to send to). May be called from `open`.
    @discardableResult
    public func send(namespace: String, payload: String, destination: String? = nil) -> Int32 {
        guard let f = table.pointee.send_message else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        return payload.withCString { p in
            namespace.withCString { ns in
                if let destination { return destination.withCString { f(ctx, ns, $0, p) } }
                return f(ctx, ns, nil, p)
            }
        }
    }

    /// Finishes a command with a JSON result.
    @discardableResult
    public func complete(command id: UInt64, json: String) -> Int32 { finish(id, Int32(CASTLINE_OK.rawValue), json) }

    /// Fails a command with a reason.
    @discardableResult
    public func fail(command id: UInt64, reason: String) -> Int32 { finish(id, Int32(CASTLINE_ERR_FAILED.rawValue), reason) }

    private func finish(_ id: UInt64, _ status: Int32, _ text: String) -> Int32 {
        guard let f = table.pointee.complete_command else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        return text.withCString { f(ctx, id, status, $0) }
    }

    /// Reports a found or changed device (see the ABI for the JSON keys).
    @discardableResult
    public func deviceFound(json: String) -> Int32 {
        guard let f = table.pointee.device_found else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        return json.withCString { f(ctx, $0) }
    }

    @discardableResult
    public func deviceLost(id: String) -> Int32 {
        guard let f = table.pointee.device_lost else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        return id.withCString { f(ctx, $0) }
    }

    /// Reports that discovery cannot work now (nil: it recovered).
    @discardableResult
    public func discoveryProblem(_ problem: String?) -> Int32 {
        guard let f = table.pointee.discovery_problem else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        if let problem { return problem.withCString { f(ctx, $0) } }
        return f(ctx, nil)
    }

    /// Since ABI 1.1 (bridges): true when the host offers ``controlRequest(id:json:)`` and
    /// ``subscribeEvents(kinds:)`` (its table is at least the 1.1 size).
    public var offersBridgeServices: Bool {
        // Only the fields are read (pointer(to:)), never the whole struct: a 1.0 host's table is shorter.
        Int(table.pointer(to: \.struct_size)!.pointee) >= Int(CASTLINE_HOST_SERVICES_SIZE_1_1)
            && table.pointer(to: \.control_request)!.pointee != nil && table.pointer(to: \.events_subscribe)!.pointee != nil
    }

    /// Since ABI 1.1 (bridges): one control-API request, `{"method","path","body"}` JSON text;
    /// answered once through ``BridgePlugin/didReply(request:status:json:)`` with the same `id`.
    @discardableResult
    public func controlRequest(id: UInt64, json: String) -> Int32 {
        guard offersBridgeServices, let f = table.pointer(to: \.control_request)!.pointee else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        return json.withCString { f(ctx, id, $0) }
    }

    /// Since ABI 1.1 (bridges): the hub's events of `kinds` (all when nil) through
    /// ``BridgePlugin/didReceive(event:)`` from now on.
    @discardableResult
    public func subscribeEvents(kinds: [String]? = nil) -> Int32 {
        guard offersBridgeServices, let f = table.pointer(to: \.events_subscribe)!.pointee else { return Int32(CASTLINE_ERR_FAILED.rawValue) }
        guard let kinds, !kinds.isEmpty else { return f(ctx, nil) }
        return kinds.joined(separator: ",").withCString { f(ctx, $0) }
    }

    /// Runs `fire` after `delayMs`, then every `repeatMs` (0: once), on the instance's queue.
    public func startTimer(delayMs: UInt64, repeatMs: UInt64 = 0, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        guard let f = table.pointee.timer_start else { return 0 }
        let box = TimerBox(fire: fire, once: repeatMs == 0)
        let raw = Unmanaged.passRetained(box).toOpaque()
        let id = f(ctx, delayMs, repeatMs, { user in
            let box = Unmanaged<TimerBox>.fromOpaque(user!)
            let timer = box.takeUnretainedValue()
            timer.fire()
            if timer.once { box.release() }
        }, raw)
        if id == 0 { Unmanaged<TimerBox>.fromOpaque(raw).release() }
        // A cancelled repeating timer's box is kept: the host may not tell when its last fire ran.
        return id
    }

    public func cancelTimer(_ id: UInt64) { table.pointee.timer_cancel?(ctx, id) }
}

final class TimerBox: Sendable {
    let fire: @Sendable () -> Void
    let once: Bool
    init(fire: @escaping @Sendable () -> Void, once: Bool) {
        self.fire = fire
        self.once = once
    }
}

/// Writes `text` into a host error buffer (truncated to fit, always NUL-terminated).
func write(_ text: String, to buffer: castline_error_buffer) {
    guard let out = buffer.text, buffer.capacity > 0 else { return }
    var bytes = Array(text.utf8.prefix(buffer.capacity - 1))
    bytes.append(0)
    bytes.withUnsafeBufferPointer { b in
        b.withMemoryRebound(to: CChar.self) { out.update(from: $0.baseAddress!, count: $0.count) }
    }
}
