import Synchronization

/// The logging hub (GCKLogger's role): one ``LoggerFilter``, the per-class threshold caches and
/// the sinks, each behind its own bounded queue and worker thread.
///
/// Use ``shared`` in programs; create private systems in tests. Only the executable adds sinks to
/// the shared system and reads `CASTLINE_LOG`; libraries just create ``Logger``s. With no sink,
/// records pass the filter and go nowhere. Thread-safe.
public final class LogSystem: Sendable {
    /// The process-wide system. Starts with minimum level `info`, no rules and no sinks.
    public static let shared = LogSystem()

    /// Environment variable holding a rule string in the ``LogRuleParser`` grammar.
    public static let environmentVariable = "CASTLINE_LOG"

    public let filter: LoggerFilter
    private let handles: Mutex<[String: LogClassHandle]>
    private let pipelines: Mutex<[SinkPipeline]>
    private let log: Mutex<Logger?>
    private let processIdentity: Mutex<LogProcess>
    /// Records kept for sinks added later (``holdForLateSinks(capacity:)``), with how many did
    /// not fit; nil when nothing is held.
    private let held: Mutex<(records: [LogRecord], capacity: Int, lost: Int)?>
    /// Whether records are held: one relaxed load on the logging path when they are not.
    private let holding: Atomic<Bool>

    /// Default queue capacity per sink, in records.
    public static let defaultQueueCapacity = 8192

    public init(filter: LoggerFilter = LoggerFilter()) {
        self.filter = filter
        handles = Mutex([:])
        pipelines = Mutex([])
        log = Mutex(nil)
        processIdentity = Mutex(LogProcess.current)
        held = Mutex(nil)
        holding = Atomic(false)
    }

    /// The process the records come from (`pid`, role), which sinks that leave the process add
    /// to each record. The executable sets the role once at start-up; default: `embedded`.
    public var process: LogProcess {
        get { processIdentity.withLock { $0 } }
        set { processIdentity.withLock { $0 = newValue } }
    }

    /// A logger for `className` in this system.
    public func logger(forClass className: String) -> Logger { Logger(class: className, system: self) }

    func handle(forClass className: String) -> LogClassHandle {
        handles.withLock { table in
            if let h = table[className] { return h }
            let h = LogClassHandle(className: className, system: self)
            table[className] = h
            return h
        }
    }

    private var selfLogger: Logger {
        if let l = log.withLock({ $0 }) { return l }
        let l = Logger(class: "LogSystem", system: self)
        log.withLock { $0 = l }
        return l
    }

    // MARK: Sinks

    /// Adds a sink with its own worker thread and a queue of `queueCapacity` records. While
    /// records are held (``holdForLateSinks(capacity:)``), the new sink gets them first, oldest
    /// first, so what happened before it opened (a plugin refused while loading) reaches it too.
    public func addSink(_ sink: any LogSink, queueCapacity: Int = LogSystem.defaultQueueCapacity) {
        let pipeline = SinkPipeline(sink: sink, capacity: queueCapacity)
        pipelines.withLock { list in
            // Under the pipelines' lock: a record dispatched meanwhile is either held (and
            // replayed here) or reaches the new pipeline, never both.
            if let (records, _, lost) = held.withLock({ $0 }) {
                if lost > 0 {
                    pipeline.enqueue(LogRecord(level: .warning, className: "LogSystem", function: #function, file: #fileID, line: #line,
                                               message: "\(lost) records logged before this sink opened were not kept (start-up buffer full)",
                                               fields: ["sink": .string(sink.name), "lost": .int(lost)]))
                }
                for record in records { pipeline.enqueue(record) }
            }
            list.append(pipeline)
        }
    }

    /// Keeps up to `capacity` records from now on for sinks that are added later (the config's
    /// sinks open only after the plugins loaded, and what loading found belongs in them too),
    /// until ``releaseHeld()``. Past the capacity, records are counted and the count is reported
    /// to each late sink.
    public func holdForLateSinks(capacity: Int = 1024) {
        pipelines.withLock { _ in
            held.withLock { $0 = ([], max(0, capacity), 0) }
            holding.store(true, ordering: .relaxed)
        }
    }

    /// Stops holding records for late sinks and drops those held.
    public func releaseHeld() {
        pipelines.withLock { _ in
            holding.store(false, ordering: .relaxed)
            held.withLock { $0 = nil }
        }
    }

    /// Flushes and removes the sinks named `name`.
    public func removeSinks(named name: String, timeout: Duration = .seconds(5)) {
        let removed = pipelines.withLock { list -> [SinkPipeline] in
            let gone = list.filter { $0.sink.name == name }
            list.removeAll { $0.sink.name == name }
            return gone
        }
        for p in removed { _ = p.stop(timeoutNanos: timeout.nanoseconds) }
    }

    /// Counters per sink, in the order the sinks were added.
    public var sinkStatistics: [LogSinkStatistics] { pipelines.withLock { $0 }.map(\.statistics) }

    /// Hands a record that already passed the filter to every sink's queue.
    public func dispatch(_ record: consuming LogRecord) {
        let list: [SinkPipeline]
        if holding.load(ordering: .relaxed) {
            list = pipelines.withLock { list in
                held.withLock { held in
                    guard held != nil else { return }
                    if held!.records.count < held!.capacity { held!.records.append(copy record) } else { held!.lost += 1 }
                }
                return list
            }
        } else {
            list = pipelines.withLock { $0 }
        }
        guard let last = list.last else { return }
        for p in list.dropLast() { p.enqueue(copy record) }
        last.enqueue(record)
    }

    /// Filters a ready-made record (swift-log bridge, plugins, traffic logs) and dispatches it.
    public func submit(_ record: LogRecord) {
        handle(forClass: record.className).submit(record)
    }

    /// Waits until every sink wrote and flushed what was queued. False if a sink timed out.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) -> Bool {
        let list = pipelines.withLock { $0 }
        var ok = true
        for p in list where !p.flush(timeoutNanos: timeout.nanoseconds) { ok = false }
        return ok
    }

    /// Flushes and stops every sink (call at exit). Records logged afterwards go nowhere.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(5)) -> Bool {
        let list = pipelines.withLock { list -> [SinkPipeline] in
            let all = list
            list = []
            return all
        }
        var ok = true
        for p in list where !p.stop(timeoutNanos: timeout.nanoseconds) { ok = false }
        return ok
    }

    // MARK: Rules from text

    /// Replaces the rules with those of `ruleString` (same grammar as `CASTLINE_LOG`).
    ///
    /// On a syntax error nothing changes, the error is logged at `error` and thrown, so the
    /// previous rules keep running. A successful change is logged at `info` bypassing the filter,
    /// so it is always visible.
    public func applyRules(_ ruleString: String, source: String) throws(LogRuleSyntaxError) {
        let set: LogRuleSet
        do {
            set = try LogRuleParser.parse(ruleString)
        } catch {
            selfLogger.error("rejected log rules from \(source): \(error.reason) at column \(error.column); previous rules stay",
                             ["source": .string(source), "rules": .string(ruleString), "column": .int(error.column)])
            throw error
        }
        filter.replaceRules(with: set)
        dispatch(LogRecord(level: .info, className: "LogSystem", function: #function, file: #fileID, line: #line,
                           message: "log rules from \(source): \(filter.ruleString)",
                           fields: ["source": .string(source), "rules": .string(filter.ruleString)]))
    }

    /// Applies `CASTLINE_LOG` from `environment` if set. Returns the error instead of throwing so a
    /// program can print it and go on with the previous rules.
    @discardableResult
    public func applyEnvironment(_ environment: [String: String]) -> LogRuleSyntaxError? {
        guard let text = environment[LogSystem.environmentVariable] else { return nil }
        do {
            try applyRules(text, source: LogSystem.environmentVariable)
            return nil
        } catch {
            return error
        }
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (s, attos) = components
        if s < 0 { return 0 }
        return UInt64(s) * 1_000_000_000 + UInt64(attos / 1_000_000_000)
    }
}
