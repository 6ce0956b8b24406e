import CastLogging
import Synchronization

/// A sink that keeps records in memory, for tests of any module that logs.
/// Thread-safe.
package final class MemoryLogSink: LogSink {
    package let name: String
    private let stored = Mutex<[LogRecord]>([])
    private let flushes = Mutex(0)

    package init(name: String = "memory") { self.name = name }

    package func write(_ records: [LogRecord]) { stored.withLock { $0.append(contentsOf: records) } }
    package func flush() { flushes.withLock { $0 += 1 } }

    /// Everything written so far, oldest first.
    package var records: [LogRecord] { stored.withLock { $0 } }
    /// How often `flush()` ran.
    package var flushCount: Int { flushes.withLock { $0 } }

    /// A private log system at `rules` with this kind of sink attached.
    package static func makeSystem(_ rules: String = "", minimum: LogLevel = .info) throws -> (LogSystem, MemoryLogSink) {
        let system = LogSystem(filter: try LoggerFilter(parsing: rules, minimumLevel: minimum))
        let sink = MemoryLogSink()
        system.addSink(sink)
        return (system, sink)
    }
}
