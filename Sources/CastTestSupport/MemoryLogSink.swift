import CastLogging
import Synchronization

/// A sink that keeps records in memory, for tests of any module that logs.
/// Thread-safe.
public final class MemoryLogSink: LogSink {
    public let name: String
    private let stored = Mutex<[LogRecord]>([])
    private let flushes = Mutex(0)

    public init(name: String = "memory") { self.name = name }

    public func write(_ records: [LogRecord]) { stored.withLock { $0.append(contentsOf: records) } }
    public func flush() { flushes.withLock { $0 += 1 } }

    /// Everything written so far, oldest first.
    public var records: [LogRecord] { stored.withLock { $0 } }
    /// How often `flush()` ran.
    public var flushCount: Int { flushes.withLock { $0 } }

    /// A private log system at `rules` with this kind of sink attached.
    public static func makeSystem(_ rules: String = "", minimum: LogLevel = .info) throws -> (LogSystem, MemoryLogSink) {
        let system = LogSystem(filter: try LoggerFilter(parsing: rules, minimumLevel: minimum))
        let sink = MemoryLogSink()
        system.addSink(sink)
        return (system, sink)
    }
}
