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

    /// Default queue capacity per sink, in records.
    public static let defaultQueueCapacity = 8192

    public init(filter: LoggerFilter = LoggerFilter()) {
        self.filter = filter
        handles = Mutex([:])
        pipelines = Mutex([])
        log = Mutex(nil)
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

    /// Adds a sink with its own worker thread and a queue of `queueCapacity` records.
    public func addSink(_ sink: any LogSink, queueCapacity: Int = LogSystem.defaultQueueCapacity) {
        let pipeline = SinkPipeline(sink: sink, capacity: queueCapacity)
        pipelines.withLock { $0.append(pipeline) }
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
        let list = pipelines.withLock { $0 }
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
