import Synchronization
@testable import CastLogging

/// Collects records in memory.
final class MemorySink: LogSink {
    let name: String
    private let stored = Mutex<[LogRecord]>([])
    private let flushes = Mutex(0)
    init(name: String = "memory") { self.name = name }
    func write(_ records: [LogRecord]) { stored.withLock { $0.append(contentsOf: records) } }
    func flush() { flushes.withLock { $0 += 1 } }
    var records: [LogRecord] { stored.withLock { $0 } }
    var flushCount: Int { flushes.withLock { $0 } }
}

/// Blocks every write until `open()` is called: a sink that has hung.
final class GatedSink: LogSink {
    let name = "gated"
    private let gate = ConditionLock()
    private let isOpen = Mutex(false)
    private let stored = Mutex<[LogRecord]>([])
    func write(_ records: [LogRecord]) {
        gate.lock()
        while !isOpen.withLock({ $0 }) { gate.wait() }
        gate.unlock()
        stored.withLock { $0.append(contentsOf: records) }
    }
    func open() {
        gate.lock()
        isOpen.withLock { $0 = true }
        gate.broadcast()
        gate.unlock()
    }
    var records: [LogRecord] { stored.withLock { $0 } }
}

/// A counter the autoclosure tests bump.
final class Counter: Sendable {
    private let value = Mutex(0)
    func bump() -> String { value.withLock { $0 += 1 }; return "built" }
    var count: Int { value.withLock { $0 } }
}

func makeSystem(_ rules: String = "", minimum: LogLevel = .info) throws -> (LogSystem, MemorySink) {
    let system = LogSystem(filter: try LoggerFilter(parsing: rules, minimumLevel: minimum))
    let sink = MemorySink()
    system.addSink(sink)
    return (system, sink)
}
