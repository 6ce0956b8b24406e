internal import CCastPluginABI
internal import CCastShims
import CastCore
import CastLogging
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `castline plugin-host FILE`: the helper side of ``IsolatedPlugin``. Loads the file, runs
/// `init` when asked and then serves the caller's frames on fd 3 until it closes. Host services
/// are this process's own (``HostServices``, timers included); what the plugin sends, completes
/// and logs goes to the caller as frames.
package enum PluginHostChild {
    /// Sets this helper's resource limits before the plugin is loaded: `openFiles` descriptors,
    /// and a data size (heap and private mappings) of twice `memoryMB` plus 256 MiB, a hard stop
    /// for a leak faster than the parent's samples (which kill the helper at `memoryMB`).
    package static func applyLimits(openFiles: Int?, memoryMB: Int?) {
        if let openFiles, openFiles > 0 {
            var limit = rlimit(rlim_cur: rlim_t(openFiles), rlim_max: rlim_t(openFiles))
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        if let memoryMB, memoryMB > 0 {
            let bytes = rlim_t(memoryMB * 2 + 256) << 20
            var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
            setrlimit(Int32(RLIMIT_DATA.rawValue), &limit)
        }
    }

    /// Runs a call into the plugin with its name as the crash report's callback.
    @inline(__always)
    static func during<R>(_ callback: StaticString, _ body: () -> R) -> R {
        castline_crash_reporter_set_callback(UnsafeRawPointer(callback.utf8Start).assumingMemoryBound(to: CChar.self))
        defer { castline_crash_reporter_set_callback(nil) }
        return body()
    }

    /// The conversation on fd 3; returns the exit status (call `_exit` with it).
    package static func run(path: String) -> Int32 {
        let socket = FramedSocket(fd: 3, sharedWithCrashReporter: true)
        // A crash in the plugin: its last records and a crashReport (the callback, the stack) first.
        castline_crash_reporter_install(3)
        HostServices.notesRecordsForCrashes.store(true, ordering: .relaxed)
        guard case .success(let command) = socket.receive(), let config = command["init"]?.string else { return 0 }
        let plugin: LoadedPlugin
        switch PluginLoader.load(path, checkSafety: false) {
        case .failure(let error):
            socket.send(["refused": error.json])
            return 0
        case .success(let loaded):
            plugin = loaded
        }
        let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .verbose))
        logSystem.process = LogProcess(role: .pluginHelper)
        logSystem.addSink(ForwardingLogSink(socket: socket), queueCapacity: 8192)
        if let initialize = plugin.entry.initialize {
            let context = PluginHostContext.register(pluginID: plugin.id, featureID: nil, role: .plugin, logSystem: logSystem)
            let errorText = PluginErrorText()
            let rc = Self.during("init") { config.withCString { initialize(HostServices.table, context.pointer, $0, errorText.buffer) } }
            guard rc == 0 else {
                socket.send(["initFailed": ["status": .int(Int64(rc)), "reason": errorText.text.map { .string($0) } ?? .null]])
                return 0
            }
        }
        socket.send(["initialised": plugin.descriptionJSON])
        var instances: [Int64: ChildInstance] = [:]
        var sinks: [Int64: PluginLogSink] = [:]
        while case .success(let frame) = socket.receive() {
            if let batch = frame["records"], let instance = batch["instance"]?.int {
                // On this thread, in order: a write that never returns holds the pong (the
                // caller kills and restarts this process).
                if let sink = sinks[instance], case .array(let items)? = batch["batch"] { Self.during("write") { sink.write(items.compactMap(Self.record)) } }
                continue
            }
            if let probe = frame["probe"], let call = probe["call"]?.int {
                Self.probe(probe, call: call, plugin: plugin, socket: socket)
                continue
            }
            if let open = frame["openSink"], let call = open["call"]?.int, let instance = open["instance"]?.int {
                let (status, error, sink) = Self.openSink(open, plugin: plugin, logSystem: logSystem)
                if let sink { sinks[instance] = sink }
                socket.send(["answer": ["call": .int(call), "status": .int(Int64(status)), "error": error.map { .string($0) } ?? .null]])
                continue
            }
            if let instance = frame["flushSink"]?["instance"]?.int {
                sinks[instance]?.flush()
                continue
            }
            if let instance = frame["closeSink"]?["instance"]?.int {
                sinks.removeValue(forKey: instance)?.close()
                continue
            }
            if let ping = frame["ping"]?.int {
                // Answered once every instance's queue got to it: a stuck callback holds the pong.
                let drained = DispatchGroup()
                for entry in instances.values { entry.context.queue.async(group: drained) {} }
                drained.notify(queue: .global()) { socket.send(["pong": .int(ping)]) }
            } else if let open = frame["open"], let instance = open["instance"]?.int, let featureID = open["feature"]?.string {
                guard let feature = plugin.features.first(where: { $0.kind == .channel && $0.id == featureID }),
                      case .channel(let vtable) = feature.vtable else {
                    socket.send(["opened": ["instance": .int(instance), "status": .int(Int64(HostServices.invalidArgument)),
                                            "error": .string("no channel \(featureID) in the plugin")]])
                    continue
                }
                let config = open["config"]?.string ?? "{}", session = open["session"]?.string ?? "{}"
                // The app the instance may send to, as castline last told it (the session, then
                // `appEvent` frames): a send with no app is refused here, at once, as in process.
                let app = AppPresence(transportID: (try? JSONValue.parse(session))?["transport_id"]?.string)
                let callbacks = PluginHostContext.ChannelCallbacks(
                    send: { namespace, destination, payload in
                        if case .failure(let refusal) = PluginChannel.route(destination: destination, appTransportID: app.transportID,
                                                                            sessionEnded: false) {
                            return refusal.status
                        }
                        socket.send(["send": ["instance": .int(instance), "namespace": .string(namespace),
                                              "destination": destination.map { .string($0) } ?? .null, "payload": .string(payload)]])
                        return HostServices.ok
                    },
                    complete: { id, result in
                        switch result {
                        case .success(let json):
                            socket.send(["complete": ["instance": .int(instance), "id": .int(Int64(bitPattern: id)),
                                                      "status": .int(Int64(HostServices.ok)), "json": json]])
                        case .failure(let error):
                            socket.send(["complete": ["instance": .int(instance), "id": .int(Int64(bitPattern: id)),
                                                      "status": .int(Int64(HostServices.failed)), "reason": .string(error.reason)]])
                        }
                        return true
                    })
                let context = PluginHostContext.register(pluginID: plugin.id, featureID: featureID, role: .channel(callbacks),
                                                         declaredNamespaces: Set(feature.declarations), logSystem: logSystem)
                let errorText = PluginErrorText()
                let userdata = feature.userdata
                let (rc, pointer) = context.queue.sync { () -> (Int32, InstancePointer) in
                    var out: UnsafeMutableRawPointer?
                    let rc = config.withCString { c in
                        session.withCString { s in Self.during("open") { vtable.open!(userdata.pointer, HostServices.table, context.pointer, c, s, &out, errorText.buffer) } }
                    }
                    return (rc, InstancePointer(pointer: out))
                }
                if rc == 0 { instances[instance] = ChildInstance(context: context, vtable: vtable, pointer: pointer, app: app) } else { context.unregister() }
                socket.send(["opened": ["instance": .int(instance), "status": .int(Int64(rc)),
                                        "error": errorText.text.map { .string($0) } ?? .null]])
            } else if let message = frame["message"], let instance = message["instance"]?.int, let entry = instances[instance],
                      let namespace = message["namespace"]?.string, let payload = message["payload"]?.string {
                let source = message["source"]?.string ?? ""
                entry.context.queue.async {
                    payload.withCString { p in
                        namespace.withCString { ns in
                            source.withCString { src in Self.during("on_message") { entry.vtable.on_message!(entry.pointer.pointer, ns, src, p, payload.utf8.count) } }
                        }
                    }
                }
            } else if let command = frame["command"], let instance = command["instance"]?.int, let entry = instances[instance],
                      let id = command["id"]?.int, let json = command["json"]?.string {
                guard let commandFn = entry.vtable.command else { continue }
                entry.context.queue.async {
                    json.withCString { text in Self.during("command") { commandFn(entry.pointer.pointer, UInt64(bitPattern: id), text, json.utf8.count) } }
                }
            } else if let appEvent = frame["appEvent"], let instance = appEvent["instance"]?.int, let entry = instances[instance],
                      let event = appEvent["event"]?.int, let info = appEvent["info"]?.string {
                guard let code = Int32(exactly: event) else { continue }
                entry.app.transportID = appEvent["current"]?.string
                guard let appEventFn = entry.vtable.on_app_event else { continue }
                entry.context.queue.async {
                    info.withCString { text in Self.during("on_app_event") { appEventFn(entry.pointer.pointer, code, text, info.utf8.count) } }
                }
            } else if let close = frame["close"], let instance = close["instance"]?.int, let entry = instances.removeValue(forKey: instance) {
                entry.context.queue.async { Self.during("close") { entry.vtable.close!(entry.pointer.pointer) } }
                entry.context.queue.sync {}
                entry.context.unregister()
            }
        }
        for sink in sinks.values { sink.close() }
        logSystem.flush(timeout: .seconds(1))
        return 0
    }

    /// A `probe` frame: the feature's probe on a thread of its own (probes may run concurrently),
    /// answered with its status and report.
    static func probe(_ frame: JSONValue, call: Int64, plugin: LoadedPlugin, socket: FramedSocket) {
        let featureID = frame["feature"]?.string ?? ""
        guard let feature = plugin.features.first(where: { $0.kind == .mediaFormat && $0.id == featureID }),
              case .mediaFormat(let vtable) = feature.vtable else {
            socket.send(["answer": ["call": .int(call), "status": .int(Int64(HostServices.invalidArgument)),
                                    "error": .string("no media format \(featureID) in the plugin")]])
            return
        }
        let body = frame["body"]?.string.flatMap(Base64.decode)
        let probe = ProbeCall(vtable: vtable, userdata: feature.userdata, url: frame["url"]?.string,
                              contentType: frame["content_type"]?.string, body: body)
        DispatchQueue.global().async {
            Self.during("probe") { probe.run() }
            var answer: JSONObject = ["call": .int(call), "status": .int(Int64(probe.status))]
            if let bytes = probe.collector.bytes { answer.set("json", .string(String(decoding: bytes, as: UTF8.self))) }
            if let problem = probe.collector.problem {
                answer.set("status", .int(Int64(HostServices.failed)))
                answer.set("error", .string(problem))
            } else if let text = probe.errorText.text {
                answer.set("error", .string(text))
            }
            socket.send(["answer": .object(answer)])
        }
    }

    /// An `openSink` frame: the feature's log sink opened in this process; it is never disabled
    /// here (a write that overruns holds the pong instead).
    static func openSink(_ frame: JSONValue, plugin: LoadedPlugin, logSystem: LogSystem) -> (Int32, String?, PluginLogSink?) {
        let featureID = frame["feature"]?.string ?? ""
        guard let feature = plugin.features.first(where: { $0.kind == .logSink && $0.id == featureID }),
              case .logSink(let vtable) = feature.vtable else {
            return (HostServices.invalidArgument, "no log sink \(featureID) in the plugin", nil)
        }
        let context = PluginHostContext.register(pluginID: plugin.id, featureID: featureID, role: .logSink, logSystem: logSystem)
        let errorText = PluginErrorText()
        var instance: UnsafeMutableRawPointer?
        let rc = (frame["options"]?.string ?? "{}").withCString {
            vtable.open!(feature.userdata.pointer, HostServices.table, context.pointer, $0, &instance, errorText.buffer)
        }
        guard rc == 0 else {
            context.unregister()
            return (rc, errorText.text ?? "status \(rc)", nil)
        }
        let sink = PluginLogSink(feature: feature, vtable: vtable, instance: instance, context: context, name: featureID,
                                 watch: PluginCallWatch(bound: 1e9, watched: false))
        return (HostServices.ok, nil, sink)
    }

    /// One record of a `records` batch: `[timestamp_ns, level, class, message, file, function, line, {fields}]`.
    static func record(_ item: JSONValue) -> LogRecord? {
        guard case .array(let parts) = item, parts.count == 8, let level = parts[1].int.flatMap({ LogLevel(rawValue: UInt8(clamping: $0)) }) else {
            return nil
        }
        var fields = LogFields()
        if case .object(let object) = parts[7] {
            for (key, value) in object {
                switch value {
                case .int(let i): fields[key] = .int(i)
                case .double(let d): fields[key] = .double(d)
                case .bool(let b): fields[key] = .bool(b)
                case .string(let text): fields[key] = .string(text)
                default: fields[key] = .string(value.serialized())
                }
            }
        }
        let timestamp: UInt64 = switch parts[0] {
        case .int(let i): UInt64(clamping: i)
        case .double(let d): d >= 0 && d < 1.8e19 ? UInt64(d) : 0
        default: 0
        }
        return LogRecord(timestampNanos: timestamp, level: level, className: parts[2].string ?? "", function: parts[5].string ?? "",
                         file: parts[4].string ?? "", line: UInt(clamping: parts[6].int ?? 0), message: parts[3].string ?? "", fields: fields)
    }
}

/// An open channel instance in the helper.
final class ChildInstance: @unchecked Sendable {
    let context: PluginHostContext
    let vtable: castline_channel_vtable
    let pointer: InstancePointer
    let app: AppPresence

    init(context: PluginHostContext, vtable: castline_channel_vtable, pointer: InstancePointer, app: AppPresence) {
        self.context = context
        self.vtable = vtable
        self.pointer = pointer
        self.app = app
    }
}

/// The transportId of the app an isolated channel instance talks to (nil: none runs), kept from
/// the frames castline sends. Thread-safe: read by the plugin's sends, written by the frame reader.
final class AppPresence: Sendable {
    private let current: Mutex<String?>
    init(transportID: String?) { current = Mutex(transportID) }
    var transportID: String? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

/// The helper's log sink: each record to the caller as a `log` frame.
final class ForwardingLogSink: LogSink, @unchecked Sendable {
    let name = "plugin-host"
    private let socket: FramedSocket

    init(socket: FramedSocket) { self.socket = socket }

    private let process = LogProcess(role: .pluginHelper)

    /// Each record as a `log` frame with its own time (the host orders it among its own by that,
    /// not by when the frame arrived) and this process's `pid` and role.
    func write(_ records: [LogRecord]) {
        for record in records { socket.send(Self.frame(record, process: process)) }
    }

    /// A plugin's record, as it is logged, kept for the crash report (the queue dies with the process).
    static func noteForCrash(_ record: LogRecord) {
        var writer = JSONWriter(capacity: 512)
        writer.write(frame(record, process: LogProcess(role: .pluginHelper)))
        writer.bytes.withMemoryRebound(to: CChar.self) { castline_crash_reporter_note_record($0.baseAddress, $0.count) }
    }

    static func frame(_ record: LogRecord, process: LogProcess) -> JSONValue {
        var fields = JSONObject()
        if !LogProcess.isNamed(in: record.fields) {
            fields.set(LogProcess.pidField, .int(Int64(process.pid)))
            fields.set(LogProcess.roleField, .string(process.role))
        }
        record.fields.forEachField { key, value in
            switch value {
            case .string(let s): fields.set(key, .string(s))
            case .int(let i): fields.set(key, .int(i))
            case .double(let d): fields.set(key, .double(d))
            case .bool(let b): fields.set(key, .bool(b))
            }
        }
        return ["log": ["time": .int(Int64(truncatingIfNeeded: record.timestampNanos)),
                        "level": .int(Int64(record.level.rawValue)), "class": .string(record.className),
                        "message": .string(record.message), "line": .int(Int64(record.line)), "fields": .object(fields)]]
    }
}
