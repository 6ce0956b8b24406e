/// A destination for log records: console, journald, JSON Lines, a plugin.
///
/// Isolation: each sink gets its own worker thread and bounded queue inside ``LogSystem``; its
/// methods are called from that thread only, one call at a time, in record order. A slow sink
/// therefore never blocks the code that logs; when its queue is full, records are dropped,
/// counted, and reported to the sink as a `warning` record of class `LogSystem`.
public protocol LogSink: AnyObject, Sendable {
    /// Short name used in statistics and overflow reports (`console`, `journald`).
    var name: String { get }
    /// Writes records, oldest first.
    func write(_ records: [LogRecord])
    /// Writes records, oldest first, and may move them out of `records` (the pipeline's batch,
    /// which it empties afterwards either way, keeping its capacity). A sink that copies the
    /// records' text elsewhere implements this to read each string without a retain and release
    /// (records moved out are its own). Default: ``write(_:)``.
    func take(_ records: inout [LogRecord])
    /// Makes written records durable (fsync, fflush…). Called on flush and shutdown.
    func flush()
    /// Records the sink was handed and discarded (a plugin sink disabled for overrunning its
    /// time bound); counted in its `dropped` statistic with those its queue could not take.
    /// Default: 0.
    var discarded: UInt64 { get }
}

extension LogSink {
    public func take(_ records: inout [LogRecord]) { write(records) }
    public func flush() {}
    public var discarded: UInt64 { 0 }
}

/// Counters of one sink.
public struct LogSinkStatistics: Sendable, Equatable {
    public var name: String
    public var capacity: Int
    /// Records waiting in the queue now.
    public var queued: Int
    /// Records handed to the sink (overflow reports included).
    public var delivered: UInt64
    /// Records dropped because the queue was full, and those the sink discarded (``LogSink/discarded``).
    public var dropped: UInt64
}
