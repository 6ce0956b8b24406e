import CastCore
import CastLogging
import Dispatch
import Synchronization

/// What a plugin (or one feature instance of it) is to the host: the target of the host services
/// it calls through its `castline_host_ctx`.
///
/// The C handle is a number looked up in ``PluginHostContext/registry``, never a pointer, so a
/// stale handle from a buggy plugin is refused (`CASTLINE_ERR_INVALID_ARGUMENT`), not a crash.
/// Calls into the instance are serialized on ``queue``; host services may arrive on any thread.
final class PluginHostContext: Sendable {
    /// How the host reacts to the instance's calls.
    enum Role: Sendable {
        case plugin
        case discovery(DiscoveryCallbacks)
        case channel(ChannelCallbacks)
        case logSink
        case bridge(BridgeCallbacks)
    }

    struct BridgeCallbacks: Sendable {
        /// Queues a control request (already parsed); the ABI status.
        var request: @Sendable (_ requestID: UInt64, _ request: JSONValue) -> Int32
        /// Replaces the event subscription (nil: every kind); the ABI status.
        var subscribe: @Sendable (_ kinds: [String]?) -> Int32
    }

    struct DiscoveryCallbacks: Sendable {
        var found: @Sendable (JSONValue) -> String?
        var lost: @Sendable (String) -> Void
        var problem: @Sendable (String?) -> Void
    }

    struct ChannelCallbacks: Sendable {
        /// Queues a message after the host checked the namespace and the JSON; the ABI status
        /// (`CASTLINE_OK`: queued, sent in order).
        var send: @Sendable (_ namespace: String, _ destination: String?, _ payload: String) -> Int32
        var complete: @Sendable (_ commandID: UInt64, _ result: Result<JSONValue, PluginCommandError>) -> Bool
    }

    let handle: UInt
    let pluginID: String
    let featureID: String?
    let role: Role
    let declaredNamespaces: Set<String>
    let queue: DispatchQueue
    let logSystem: LogSystem
    let hostLog: Logger
    private let state = Mutex(State())

    private struct State {
        var loggers: [String: Logger] = [:]
        var timers: [UInt64: TimerHandle] = [:]
        var nextTimer: UInt64 = 0
        var closed = false
        var reportedSinkLogging = false
        /// One throttle per kind of problem (`input`: what the plugin passed; `send`: a refused send).
        var problems: [String: ReportThrottle] = [:]
    }

    private init(handle: UInt, pluginID: String, featureID: String?, role: Role, declaredNamespaces: Set<String>, logSystem: LogSystem) {
        self.handle = handle
        self.pluginID = pluginID
        self.featureID = featureID
        self.role = role
        self.declaredNamespaces = declaredNamespaces
        self.logSystem = logSystem
        queue = DispatchQueue(label: "castline.plugin.\(pluginID).\(featureID ?? "plugin")")
        hostLog = Logger(class: "PluginHost", system: logSystem).with(["plugin": .string(pluginID)])
    }

    // MARK: Registry

    private static let registry = Mutex<(next: UInt, contexts: [UInt: PluginHostContext])>((1, [:]))

    /// A new registered context; its `pointer` is what the plugin receives.
    static func register(pluginID: String, featureID: String?, role: Role, declaredNamespaces: Set<String> = [],
                         logSystem: LogSystem) -> PluginHostContext {
        registry.withLock { r in
            let context = PluginHostContext(handle: r.next, pluginID: pluginID, featureID: featureID, role: role,
                                            declaredNamespaces: declaredNamespaces, logSystem: logSystem)
            r.contexts[r.next] = context
            r.next += 1
            return context
        }
    }

    static func lookup(_ pointer: OpaquePointer?) -> PluginHostContext? {
        guard let pointer else { return nil }
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
        return registry.withLock { $0.contexts[key] }
    }

    /// The opaque `castline_host_ctx *` for this context.
    var pointer: OpaquePointer { OpaquePointer(bitPattern: handle)! }

    /// Ends the instance: cancels its timers and makes its handle invalid.
    func unregister() {
        let timers = state.withLock { s -> [TimerHandle] in
            s.closed = true
            defer { s.timers = [:] }
            return Array(s.timers.values)
        }
        for t in timers { t.source.cancel() }
        _ = Self.registry.withLock { $0.contexts.removeValue(forKey: handle) }
    }

    // MARK: Services

    func logger(forClass className: String) -> Logger {
        state.withLock { s in
            if let logger = s.loggers[className] { return logger }
            let logger = Logger(class: className, system: logSystem)
            if s.loggers.count < 256 { s.loggers[className] = logger }
            return logger
        }
    }

    /// Whether a problem with what the plugin passed may be reported now: the number of problems
    /// not reported since the last report, or nil (suppressed: one report a minute at most).
    /// `kind` keeps each kind of problem apart (a flood of refused sends never hides a bad
    /// argument); `now`: monotonic seconds (tests pass their own).
    func admitProblem(_ kind: String = "input", now: Double = Double(MonotonicDeadline.now()) / 1e9) -> Int? {
        state.withLock { s in
            var throttle = s.problems[kind] ?? ReportThrottle()
            defer { s.problems[kind] = throttle }
            return throttle.occurrence(now: now)
        }
    }

    /// True once, the first time a log sink tries to log through the host (dropped: it would loop).
    func noteSinkLogging() -> Bool {
        state.withLock { s in
            defer { s.reportedSinkLogging = true }
            return !s.reportedSinkLogging
        }
    }

    func startTimer(delayMs: UInt64, repeatMs: UInt64, fire: @escaping @Sendable () -> Void) -> UInt64 {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let id: UInt64? = state.withLock { s in
            guard !s.closed, s.timers.count < 4096 else { return nil }
            s.nextTimer += 1
            s.timers[s.nextTimer] = TimerHandle(source: timer)
            return s.nextTimer
        }
        guard let id else { return 0 }
        let delay = DispatchTimeInterval.milliseconds(Int(min(delayMs, 86_400_000)))
        if repeatMs > 0 {
            timer.schedule(deadline: .now() + delay, repeating: .milliseconds(Int(min(max(repeatMs, 1), 86_400_000))))
        } else {
            timer.schedule(deadline: .now() + delay)
        }
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            // Checked on the queue: a timer cancelled before this point never fires again.
            let live = self.state.withLock { s -> Bool in
                guard s.timers[id] != nil else { return false }
                if repeatMs == 0 { s.timers[id] = nil }
                return true
            }
            if live { fire() }
        }
        timer.resume()
        return id
    }

    func cancelTimer(_ id: UInt64) {
        let timer = state.withLock { $0.timers.removeValue(forKey: id) }
        timer?.source.cancel()
    }
}

/// A dispatch timer kept in locked state (DispatchSource is thread-safe but not marked Sendable).
struct TimerHandle: @unchecked Sendable {
    let source: DispatchSourceTimer
}

/// Why a plugin channel command failed.
package struct PluginCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String
    /// The plugin cannot be used now (its helper is restarting, it was disabled): not the
    /// plugin's answer, and not one to send elsewhere.
    package var unavailable: Bool
    package init(_ reason: String, unavailable: Bool = false) {
        self.reason = reason
        self.unavailable = unavailable
    }
    package var description: String { reason }
}
