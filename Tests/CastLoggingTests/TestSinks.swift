import CastTestSupport
import Synchronization
@testable import CastLogging

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

typealias MemorySink = MemoryLogSink

func makeSystem(_ rules: String = "", minimum: LogLevel = .info) throws -> (LogSystem, MemoryLogSink) {
    try MemoryLogSink.makeSystem(rules, minimum: minimum)
}
