internal import CCastPluginABI
import CastBackoff
import CastCore
import CastLogging
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A plugin whose `.so` runs in a helper process (`castline plugin-host FILE`, config
/// `plugins.isolated`), its C ABI proxied over a socket pair (``FramedSocket``): only scalars,
/// strings and JSON cross it. Its channel features work as in-process ones (``PluginChannel``),
/// its media formats are probed there (``probe(feature:url:contentType:body:)``) and its log
/// sinks written there (``IsolatedLogSink``); discovery features are refused for now.
///
/// A crash of the helper is logged (class `IsolatedPlugin`: plugin id, file, signal), every channel
/// of the plugin reports `unavailable` (pending commands fail, new ones are refused), and the
/// helper is restarted with backoff (0.5 s doubling to 30 s, reset after 60 s up). A helper that
/// does not answer a liveness ping within the bound (a plugin callback that never returns, or the
/// process stopped) is killed and restarted the same way. Once it is
/// back each open channel is opened again with its session and config: the channel works
/// again. The daemon and its sessions go on throughout.
///
/// Frames, caller → helper: `init` (config), `open` {instance, feature, config, session},
/// `message` {instance, namespace, source, payload}, `command` {instance, id, json},
/// `close` {instance}, `ping` n, `probe` {call, feature, url, content_type, body (base64)},
/// `openSink` {call, instance, feature, options}, `records` {instance, batch}, `flushSink` and
/// `closeSink` {instance}. Helper → caller: `pong` n, `answer` {call, status, json or error},
/// `initialised` (the description) or `initFailed`,
/// `opened` {instance, status, error}, `send` {instance, namespace, destination, payload},
/// `complete` {instance, id, status, json or reason}, `log` {record}. Thread-safe.
package final class IsolatedPlugin: Sendable {
    package let path: String
    package let pluginID: String
    let config: String
    let executable: String
    let logSystem: LogSystem
    let log: Logger
    /// The bound of the helper's start (process start, `dlopen`, `init`) and of each `open`.
    let bound: Double
    /// What the helper may use (`plugins.limits`).
    let limits: IsolationLimits
    let state = Mutex(State())
    /// How long a crashed, hung or over-limit helper waits before it is started again.
    static let restartBackoff = Backoff(initial: 0.5, multiplier: 2, maximum: 30)

    struct State {
        var child: ChildProcess?
        var generation = 0
        var instances: [UInt64: ChannelProxy] = [:]
        var nextInstance: UInt64 = 1
        var opening: [UInt64: ResumeOnceFrame] = [:]
        var restarts = 0
        var upSince: Double = 0

        /// The wait before the next restart (0.5 s doubling to 30 s, no jitter: one helper), and
        /// one more restart counted.
        mutating func nextRestartDelay() -> Double {
            restarts += 1
            return IsolatedPlugin.restartBackoff.delay(attempt: restarts)
        }
        var stopped = false
        var restarting = false
        /// The liveness ping awaiting its pong (number, monotonic seconds sent), and whether the
        /// current helper was killed for not answering one.
        var ping: (number: Int64, sentAt: Double)?
        var pings: Int64 = 0
        var hung = false
        /// Probes and sink opens waiting for their `answer`, by call id.
        var calls: [Int64: FrameWaiter] = [:]
        var nextCall: Int64 = 1
        /// Open log sinks, by instance (numbered with the channels).
        var sinks: [UInt64: IsolatedLogSink] = [:]
        /// The limit the current helper was killed for going over (`memory_mb`, …), with what it used.
        var limitHit: (name: String, detail: String)?
        /// The helper's CPU time at each sample of the last minute (monotonic seconds, CPU seconds).
        var cpuSamples: [(at: Double, cpu: Double)] = []
        /// Restarts since castline started, and the last reason the helper went down.
        var totalRestarts = 0
        var lastProblem: String?
        /// What the helper's crash handler sent before it died (the callback, the stack), for the crash's record.
        var crashReport: JSONValue?
        /// The helper's recent records (time, message): a crash resends its last ones, once is enough.
        var recentRecords: [(Int64, String)] = []
    }

    init(path: String, pluginID: String, config: String, executable: String, bound: Double, limits: IsolationLimits = IsolationLimits(),
         logSystem: LogSystem) {
        self.path = path
        self.pluginID = pluginID
        self.config = config
        self.executable = executable
        self.bound = bound
        self.limits = limits
        self.logSystem = logSystem
        log = Logger(class: "IsolatedPlugin", system: logSystem).with(["plugin": .string(pluginID), "path": .string(path)])
    }

    /// Starts the helper and runs `init` there: the plugin as described, or why not.
    func start() -> Result<LoadedPlugin, PluginLoadError> {
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable, ["plugin-host", path, "--open-files", "\(limits.openFiles)", "--memory-mb", "\(limits.memoryMB)"])
        } catch {
            return .failure(PluginLoadError(.openFailed, path: path, pluginID: pluginID, "cannot start its helper process: \(error)"))
        }
        guard child.socket.send(["init": .string(config)], deadline: MonotonicDeadline(after: bound)) else {
            return .failure(ended(child, during: "its start"))
        }
        switch child.socket.receive(deadline: MonotonicDeadline(after: bound + 2)) {
        case .success(let frame):
            if let description = frame["initialised"], let plugin = LoadedPlugin.described(from: description, path: path) {
                let generation = state.withLock { s -> Int in
                    s.child = child
                    s.generation += 1
                    s.upSince = (Double(MonotonicDeadline.now()) / 1e9)
                    s.cpuSamples = []
                    s.limitHit = nil
                    return s.generation
                }
                startReader(child, generation: generation)
                startPings(child, generation: generation)
                startMonitor(child, generation: generation)
                return .success(plugin)
            }
            child.kill()
            child.reap(within: 1)
            if let failed = frame["initFailed"] {
                return .failure(PluginLoadError(.initFailed, path: path, pluginID: pluginID,
                    "disabled: init failed in its helper process (status \(failed["status"]?.int ?? -1)): \(failed["reason"]?.string ?? "no reason given")"))
            }
            if let refused = frame["refused"], let error = PluginLoadError(json: refused, path: path) { return .failure(error) }
            return .failure(PluginLoadError(.openFailed, path: path, pluginID: pluginID, "its helper process answered something unexpected"))
        case .failure(.timedOut):
            child.kill()
            child.reap(within: 1)
            return .failure(PluginLoadError(.timedOut, path: path, pluginID: pluginID,
                "left out: its helper process did not start and init it within \(PluginScan.seconds(bound + 2)) (plugins.call_timeout)"))
        case .failure:
            return .failure(ended(child, during: "its start"))
        }
    }

    private func ended(_ child: ChildProcess, during step: String) -> PluginLoadError {
        let status = child.reap(within: 1)
        return PluginLoadError(.crashed, path: path, pluginID: pluginID, "left out: its helper process (castline plugin-host) \(status) during \(step)")
    }

    /// The helper's pid, nil while it is down.
    package var helperPID: Int32? { state.withLock { $0.child?.pid } }

    /// Whether the helper is down and being restarted.
    package var isRestarting: Bool { state.withLock { $0.child == nil && !$0.stopped } }
    /// Restarts since castline started.
    package var restartCount: Int { state.withLock { $0.totalRestarts } }
    /// Why the helper last went down (a crash, a hang, a limit), nil if it never did.
    package var lastProblem: String? { state.withLock { $0.lastProblem } }

    /// Ends the helper (it exits when its socket closes) and stops restarting it.
    func stop() {
        let child = state.withLock { s -> ChildProcess? in
            s.stopped = true
            defer { s.child = nil }
            return s.child
        }
        guard let child else { return }
        child.socket.close()
        child.reap(within: 1)
    }

    // MARK: Channels

    /// Opens `feature` in the helper for `proxy`; the status the plugin's `open` returned and its
    /// error text, or nil when the helper did not answer within the bound or is down.
    func open(_ proxy: ChannelProxy) async -> (status: Int32, error: String?)? {
        let waiter = ResumeOnceFrame()
        let child: ChildProcess? = state.withLock { s in
            if proxy.instance == 0 {
                proxy.instance = s.nextInstance
                s.nextInstance += 1
            }
            s.instances[proxy.instance] = proxy
            s.opening[proxy.instance] = waiter
            return s.child
        }
        guard let child else { return nil }
        let frame: JSONValue = ["open": ["instance": .int(Int64(proxy.instance)), "feature": .string(proxy.featureID),
                                         "config": .string(proxy.config), "session": .string(proxy.session)]]
        guard child.socket.send(frame, deadline: MonotonicDeadline(after: bound)) else { return nil }
        let reply = await waiter.wait(bound: bound)
        state.withLock { _ = $0.opening.removeValue(forKey: proxy.instance) }
        guard let reply else { return nil }
        return (Int32(clamping: reply["status"]?.int ?? -1), reply["error"]?.string)
    }

    /// Sends a frame for an open instance; false when the helper is down (or did not take it).
    @discardableResult
    func send(_ frame: JSONValue) -> Bool {
        guard let child = state.withLock({ $0.child }) else { return false }
        return child.socket.send(frame, deadline: MonotonicDeadline(after: bound))
    }

    /// Forgets an instance (its channel closed); the helper closes it.
    func close(_ proxy: ChannelProxy) {
        state.withLock { _ = $0.instances.removeValue(forKey: proxy.instance) }
        send(["close": ["instance": .int(Int64(proxy.instance))]])
    }

    // MARK: The helper's frames, and its crashes

    private func startReader(_ child: ChildProcess, generation: Int) {
        let thread = DispatchQueue(label: "castline.plugin-host.\(pluginID).reader")
        thread.async { [weak self] in
            while true {
                switch child.socket.receive() {
                case .success(let frame):
                    self?.handle(frame)
                case .failure:
                    self?.helperEnded(child, generation: generation)
                    return
                }
                if self == nil { return }
            }
        }
    }

    private func handle(_ frame: JSONValue) {
        if let opened = frame["opened"], let instance = opened["instance"]?.int {
            let waiter = state.withLock { $0.opening[UInt64(instance)] }
            waiter?.resume(opened)
        } else if let send = frame["send"], let instance = send["instance"]?.int {
            guard let proxy = state.withLock({ $0.instances[UInt64(instance)] }), let namespace = send["namespace"]?.string,
                  let payload = send["payload"]?.string else { return }
            _ = proxy.callbacks.send(namespace, send["destination"]?.string, payload)
        } else if let complete = frame["complete"], let instance = complete["instance"]?.int, let id = complete["id"]?.int {
            guard let proxy = state.withLock({ $0.instances[UInt64(instance)] }) else { return }
            let result: Result<JSONValue, PluginCommandError>
            if complete["status"]?.int == Int64(HostServices.ok), let json = complete["json"] {
                result = .success(json)
            } else {
                result = .failure(PluginCommandError(complete["reason"]?.string ?? "failed"))
            }
            _ = proxy.callbacks.complete(UInt64(id), result)
        } else if let record = frame["log"] {
            submit(record)
        } else if let report = frame["crashReport"] {
            state.withLock { $0.crashReport = report }
        } else if let answer = frame["answer"], let id = answer["call"]?.int {
            state.withLock { $0.calls.removeValue(forKey: id) }?.resume(answer)
        } else if let pong = frame["pong"]?.int {
            state.withLock { s in if s.ping?.number == pong { s.ping = nil } }
        }
    }

    /// Every `bound` seconds a `ping`, which the helper answers once every channel instance's
    /// queue has drained: a helper, or a plugin callback in it, that does not answer within
    /// `bound` is hung; the helper is killed (SIGKILL, by its pid) and restarted like a crashed one.
    private func startPings(_ child: ChildProcess, generation: Int) {
        let interval = max(bound, 0.05)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(interval * 1000))) { [weak self] in
            guard let self else { return }
            let now = Double(MonotonicDeadline.now()) / 1e9
            enum Step { case stop, send(Int64), hung(Double) }
            let step = self.state.withLock { s -> Step in
                guard s.generation == generation, !s.stopped, s.child != nil else { return .stop }
                if let ping = s.ping {
                    guard now - ping.sentAt < interval else { s.hung = true; return .hung(now - ping.sentAt) }
                    return .send(0)
                }
                s.pings += 1
                s.ping = (s.pings, now)
                return .send(s.pings)
            }
            switch step {
            case .stop:
                return
            case .hung(let waited):
                // The bound as configured (the wait itself overshoots it by the ping's timer).
                self.log.error("plugin \(self.pluginID)'s helper process (pid \(child.pid)) did not answer within \(PluginScan.seconds(self.bound)) (plugins.call_timeout): a callback of the plugin does not return; killing it",
                               ["helperPid": .int(Int(child.pid)), "problem": "timed_out", "bound": .double(self.bound),
                                "waited": .double((waited * 1000).rounded() / 1000)])
                child.kill()
                return
            case .send(let number):
                if number > 0 { _ = child.socket.send(["ping": .int(number)], deadline: MonotonicDeadline(after: self.bound)) }
                self.startPings(child, generation: generation)
            }
        }
    }

    /// Every half second, what the helper uses against ``limits``: resident memory, CPU time in
    /// the last minute, open descriptors. Over one, it is killed (SIGKILL, by its pid) and
    /// restarted; the restart's record names the limit.
    private func startMonitor(_ child: ChildProcess, generation: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) { [weak self] in
            guard let self else { return }
            guard self.state.withLock({ $0.generation == generation && !$0.stopped && $0.child != nil }) else { return }
            let usage = HelperUsage.read(pid: child.pid)
            let now = Double(MonotonicDeadline.now()) / 1e9
            var over: (String, String)?
            if let resident = usage.residentBytes, resident > Int64(self.limits.memoryMB) << 20 {
                over = ("memory_mb", "\(resident >> 20) MiB resident, over its \(self.limits.memoryMB) MiB")
            }
            if let descriptors = usage.openDescriptors, descriptors >= self.limits.openFiles - 1 {
                over = over ?? ("open_files", "\(descriptors) descriptors open, at its \(self.limits.openFiles)")
            }
            if let cpu = usage.cpuSeconds {
                let used = self.state.withLock { s -> Double in
                    s.cpuSamples.append((now, cpu))
                    s.cpuSamples.removeAll { now - $0.at > 60 }
                    return cpu - (s.cpuSamples.first?.cpu ?? cpu)
                }
                if used > self.limits.cpuSeconds {
                    over = over ?? ("cpu_seconds", "\(((used * 10).rounded() / 10).formatted) CPU seconds in the last minute, over its \(self.limits.cpuSeconds.formatted)")
                }
            }
            if let (name, detail) = over {
                self.state.withLock { $0.limitHit = (name, detail) }
                self.log.error("plugin \(self.pluginID)'s helper process (pid \(child.pid)) went over its limit \(name) (\(detail)); killing it",
                               ["helperPid": .int(Int(child.pid)), "problem": "limit", "limit": .string(name), "usage": .string(detail)])
                child.kill()
                return
            }
            self.startMonitor(child, generation: generation)
        }
    }

    /// A record the plugin logged in the helper, into this process's log system.
    private func submit(_ record: JSONValue) {
        guard let raw = record["level"]?.int, let level = LogLevel(rawValue: UInt8(clamping: raw)), level != .none else { return }
        var fields = LogFields()
        if case .object(let object)? = record["fields"] {
            for (key, value) in object {
                switch value {
                case .int(let i): fields[key] = .int(i)
                case .double(let d): fields[key] = .double(d)
                case .bool(let b): fields[key] = .bool(b)
                case .string(let s): fields[key] = .string(s)
                default: fields[key] = .string(value.serialized())
                }
            }
        }
        // The helper's own time (when the plugin logged it), so its records sort among the host's.
        let time = record["time"]?.int.flatMap { $0 > 0 ? UInt64($0) : nil } ?? LogRecord.now()
        // A crash resends the plugin's last records (its sink queue dies with it): each once.
        let key = (Int64(bitPattern: time), record["message"]?.string ?? "")
        let seen = state.withLock { s -> Bool in
            if s.recentRecords.contains(where: { $0.0 == key.0 && $0.1 == key.1 }) { return true }
            s.recentRecords.append(key)
            if s.recentRecords.count > 32 { s.recentRecords.removeFirst(s.recentRecords.count - 32) }
            return false
        }
        if seen { return }
        logSystem.submit(LogRecord(timestampNanos: time, level: level, className: record["class"]?.string ?? pluginID, function: record["function"]?.string ?? "",
                                   file: record["file"]?.string ?? "", line: UInt(clamping: record["line"]?.int ?? 0),
                                   message: record["message"]?.string ?? "", fields: fields))
    }

    private func helperEnded(_ child: ChildProcess, generation: Int) {
        let status = child.reap(within: 1)
        let (current, stopped, proxies, waiters, delay, calls, sinks) = state.withLock {
            s -> (Bool, Bool, [ChannelProxy], [ResumeOnceFrame], Double, [FrameWaiter], [IsolatedLogSink]) in
            let current = s.generation == generation
            guard current, !s.stopped else { return (current, s.stopped, [], [], 0, [], []) }
            defer { s.calls = [:] }
            s.child = nil
            s.ping = nil
            s.restarting = true
            if (Double(MonotonicDeadline.now()) / 1e9) - s.upSince >= 60 { s.restarts = 0 }
            let delay = s.nextRestartDelay()
            defer { s.opening = [:] }
            return (current, false, Array(s.instances.values), Array(s.opening.values), delay, Array(s.calls.values), Array(s.sinks.values))
        }
        guard current, !stopped else { return }
        for waiter in waiters { waiter.resume(nil) }
        for call in calls { call.resume(nil) }
        for sink in sinks { sink.helperDown() }
        var signal = ""
        if case .signalled(let n) = status { signal = ChildProcess.signalName(n) }
        let limit = state.withLock { s -> (name: String, detail: String)? in
            s.totalRestarts += 1
            defer { s.limitHit = nil }
            return s.limitHit
        }
        if let limit {
            state.withLock { $0.lastProblem = "limit \(limit.name): \(limit.detail)" }
            log.info("plugin \(pluginID)'s helper process (pid \(child.pid)), killed over its limit \(limit.name), is gone; restarting it in \(delay.formatted) s",
                     ["helperPid": .int(Int(child.pid)), "problem": "limit", "limit": .string(limit.name), "restartIn": .double(delay)])
            let reason = "channel unavailable: plugin \(pluginID) went over its limit \(limit.name); it is being restarted"
            for proxy in proxies { proxy.unavailable(reason) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay * 1000))) { [weak self] in
                Task { await self?.restart() }
            }
            return
        }
        if state.withLock({ s in defer { s.hung = false }; return s.hung }) {
            state.withLock { $0.lastProblem = "hung: a callback did not return within \(PluginScan.seconds(bound))" }
            // Killed for hanging: the error was logged then; this is the restart's notice.
            log.info("plugin \(pluginID)'s hung helper process (pid \(child.pid)) is gone; restarting it in \(delay.formatted) s",
                     ["helperPid": .int(Int(child.pid)), "restartIn": .double(delay)])
            let reason = "channel unavailable: plugin \(pluginID) hung in its helper process; it is being restarted"
            for proxy in proxies { proxy.unavailable(reason) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay * 1000))) { [weak self] in
                Task { await self?.restart() }
            }
            return
        }
        let report = state.withLock { s -> JSONValue? in
            s.lastProblem = "\(status)"
            defer { s.crashReport = nil }
            return s.crashReport
        }
        // The helper's crash handler named the callback that was running and the stack.
        var fields: LogFields = ["helperPid": .int(Int(child.pid)), "status": .string("\(status)"), "signal": .string(signal),
                                 "problem": "crashed", "restartIn": .double(delay)]
        var during = ""
        if let callback = report?["callback"]?.string {
            fields["callback"] = .string(callback)
            during = " in \(callback)"
        }
        // Frames in the plugin's library that dladdr could not name (a static callback) named
        // from its symbol table, read here rather than in the helper's signal handler.
        let frames = ELFSymbols.symbolised(report?["frames"]?.array?.compactMap(\.string) ?? [], library: path)
        if !frames.isEmpty { fields["backtrace"] = .string(frames.joined(separator: "\n")) }
        let trace = frames.isEmpty ? "" : "\n" + frames.prefix(12).map { "  \($0)" }.joined(separator: "\n")
        log.error("plugin \(pluginID)'s helper process (castline plugin-host, pid \(child.pid)) \(status)\(during); its channels are unavailable, restarting it in \(delay.formatted) s\(trace)",
                  fields)
        let reason = "channel unavailable: plugin \(pluginID) \(status) in its helper process; it is being restarted"
        for proxy in proxies { proxy.unavailable(reason) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay * 1000))) { [weak self] in
            Task { await self?.restart() }
        }
    }

    private func restart() async {
        guard !state.withLock({ $0.stopped }) else { return }
        switch start() {
        case .success:
            let (proxies, sinks) = state.withLock { s -> ([ChannelProxy], [IsolatedLogSink]) in
                s.restarting = false
                return (Array(s.instances.values), Array(s.sinks.values))
            }
            for sink in sinks { sink.reopen() }
            log.info("plugin \(pluginID)'s helper process restarted (pid \(helperPID ?? 0)); reopening \(proxies.count) channel(s)",
                     ["helperPid": .int(Int(helperPID ?? 0)), "channels": .int(proxies.count)])
            for proxy in proxies {
                if let reply = await open(proxy), reply.status == HostServices.ok {
                    proxy.available()
                } else {
                    log.error("plugin \(pluginID): channel \(proxy.featureID) could not be opened again after the restart",
                              ["feature": .string(proxy.featureID)])
                }
            }
        case .failure(let error):
            let delay = state.withLock { $0.nextRestartDelay() }
            log.error("plugin \(pluginID)'s helper process did not restart: \(error.reason); trying again in \(delay.formatted) s",
                      ["problem": .string(error.kind.rawValue), "restartIn": .double(delay)])
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            await restart()
        }
    }
}

/// One channel instance of an isolated plugin, as the caller's side sees it: how to reach the
/// helper, and the callbacks its frames go to. The instance number survives restarts.
final class ChannelProxy: @unchecked Sendable {
    let plugin: IsolatedPlugin
    let featureID: String
    let config: String
    let session: String
    let callbacks: PluginHostContext.ChannelCallbacks
    /// Set by the plugin (under its lock) at the first open.
    var instance: UInt64 = 0
    private let down = Mutex<String?>(nil)
    private let onUnavailable: @Sendable (String) -> Void

    init(plugin: IsolatedPlugin, featureID: String, config: String, session: String,
         callbacks: PluginHostContext.ChannelCallbacks, onUnavailable: @escaping @Sendable (String) -> Void) {
        self.plugin = plugin
        self.featureID = featureID
        self.config = config
        self.session = session
        self.callbacks = callbacks
        self.onUnavailable = onUnavailable
    }

    /// Why the channel cannot be used now (its helper crashed and is restarting); nil when it can.
    var unavailableReason: String? { down.withLock { $0 } }

    func unavailable(_ reason: String) {
        down.withLock { $0 = reason }
        onUnavailable(reason)
    }

    func available() { down.withLock { $0 = nil } }

    func message(namespace: String, source: String, payload: String) {
        plugin.send(["message": ["instance": .int(Int64(instance)), "namespace": .string(namespace), "source": .string(source),
                                 "payload": .string(payload)]])
    }

    func command(id: UInt64, json: String) -> Bool {
        plugin.send(["command": ["instance": .int(Int64(instance)), "id": .int(Int64(id)), "json": .string(json)]])
    }

    func appEvent(_ notice: PluginAppNotice) {
        _ = plugin.send(["appEvent": ["instance": .int(Int64(instance)), "event": .int(Int64(notice.event.rawValue)), "info": .string(notice.info),
                                      "current": notice.current.map { .string($0) } ?? .null]])
    }

    func close() { plugin.close(self) }
}

/// A reply awaited once, with a bound; resumed by the reader thread or given up.
final class ResumeOnceFrame: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<JSONValue?, Never>?, value: JSONValue??)>((nil, nil))

    func resume(_ value: JSONValue?) {
        let continuation = state.withLock { s -> CheckedContinuation<JSONValue?, Never>? in
            if s.value != nil { return nil }
            s.value = .some(value)
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(returning: value)
    }

    func wait(bound: Double) async -> JSONValue? {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(bound * 1000))) { [weak self] in self?.resume(nil) }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> JSONValue?? in
                if let value = s.value { return .some(value) }
                s.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// What a helper process uses, from `/proc/<pid>`: each nil when it cannot be read.
struct HelperUsage {
    var residentBytes: Int64?
    var cpuSeconds: Double?
    var openDescriptors: Int?

    static func read(pid: Int32) -> HelperUsage {
        var usage = HelperUsage()
        let page = Int64(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = text("/proc/\(pid)/statm"), let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) {
            usage.residentBytes = pages * page
        }
        // utime and stime are fields 14 and 15; the command name (field 2) may hold spaces, so
        // count from its closing parenthesis.
        if let stat = text("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                usage.cpuSeconds = (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
            }
        }
        if let dir = opendir("/proc/\(pid)/fd") {
            var count = 0
            while readdir(dir) != nil { count += 1 }
            closedir(dir)
            usage.openDescriptors = max(0, count - 2)
        }
        return usage
    }

    private static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
