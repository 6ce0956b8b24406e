import Synchronization

/// Per-class cache of the filter decision, shared by every ``Logger`` of one class in one
/// ``LogSystem``.
///
/// The fast path is one packed atomic word — `generation << 32 | flags << 8 | lowest threshold` —
/// compared with the filter's generation. A rule change bumps the generation and the next
/// statement recomputes. Thread-safe.
@usableFromInline
final class LogClassHandle: Sendable {
    @usableFromInline static let exactFlag: UInt64 = 1 << 8
    @usableFromInline static let patternsFlag: UInt64 = 1 << 9

    let className: String
    @usableFromInline let filter: LoggerFilter
    let system: LogSystem
    @usableFromInline let cache: Atomic<UInt64>
    private let decision: Mutex<ClassDecision?>

    init(className: String, system: LogSystem) {
        self.className = className
        self.system = system
        self.filter = system.filter
        self.cache = Atomic(0)
        self.decision = Mutex(nil)
    }

    /// The packed state for the current filter generation.
    @inlinable @inline(__always)
    func state() -> UInt64 {
        let packed = cache.load(ordering: .relaxed)
        if packed >> 32 == filter.generationCounter.load(ordering: .relaxed) & 0xFFFF_FFFF { return packed }
        return refresh()
    }

    @usableFromInline
    func refresh() -> UInt64 {
        let d = currentDecision()
        var packed = (d.generation & 0xFFFF_FFFF) << 32 | UInt64(d.lowerBound)
        if d.functionRules.isEmpty { packed |= LogClassHandle.exactFlag }
        if d.hasMessagePatterns { packed |= LogClassHandle.patternsFlag }
        cache.store(packed, ordering: .relaxed)
        return packed
    }

    private func currentDecision() -> ClassDecision {
        let generation = filter.generation
        if let d = decision.withLock({ $0 }), d.generation == generation { return d }
        let d = filter.snapshot.classDecision(for: className)
        decision.withLock { $0 = d }
        return d
    }

    /// Exact threshold rank for a function, when function rules apply to this class.
    @usableFromInline
    func rank(forFunction function: StaticString) -> UInt8 {
        currentDecision().rank(forFunction: function)
    }

    func rank(forFunction function: String) -> UInt8 {
        currentDecision().rank(forFunction: function)
    }

    /// The checks after the lower bound, in filter order: the exact threshold when function rules
    /// apply to this class, then message patterns. `functionRank` is only called when needed.
    @inline(__always)
    private func passesAfterLowerBound(
        _ level: LogLevel, state: UInt64, functionRank: () -> UInt8, message: String
    ) -> Bool {
        if state & LogClassHandle.exactFlag == 0, level.rawValue < functionRank() { return false }
        if state & LogClassHandle.patternsFlag != 0, !filter.passesMessagePatterns(message) { return false }
        return true
    }

    /// Emits a ``Logger`` statement that passed the lower bound.
    @usableFromInline
    func emit(
        _ level: LogLevel, state: UInt64, message: String, fields: LogFields,
        function: StaticString, file: StaticString, line: UInt
    ) {
        guard passesAfterLowerBound(level, state: state, functionRank: { rank(forFunction: function) }, message: message)
        else { return }
        system.dispatch(LogRecord(
            level: level, className: className, staticFunction: function, staticFile: file, line: line,
            message: message, fields: fields))
    }

    /// Filters a ready-made record of this class through every check and dispatches it.
    func submit(_ record: LogRecord) {
        let state = state()
        guard record.level.rawValue >= UInt8(truncatingIfNeeded: state),
              passesAfterLowerBound(record.level, state: state, functionRank: { rank(forFunction: record.function) },
                                    message: record.message)
        else { return }
        system.dispatch(record)
    }
}
