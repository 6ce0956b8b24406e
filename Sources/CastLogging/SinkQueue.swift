/// The bounded queue in front of one sink, as a pure value: push, drop-and-count when full,
/// drain with an overflow report. ``SinkPipeline`` wraps it in a lock and a worker thread.
struct SinkQueue {
    let sinkName: String
    let capacity: Int
    private(set) var records: [LogRecord] = []
    /// Drops not yet reported to the sink.
    private(set) var unreportedDrops: UInt64 = 0
    private(set) var totalDrops: UInt64 = 0

    init(sinkName: String, capacity: Int) {
        self.sinkName = sinkName
        self.capacity = max(1, capacity)
        records.reserveCapacity(min(self.capacity, 1024))
    }

    var isEmpty: Bool { records.isEmpty && unreportedDrops == 0 }
    var count: Int { records.count }

    /// Appends `record`, or counts a drop when the queue holds `capacity` records.
    @discardableResult
    mutating func push(_ record: consuming LogRecord) -> Bool {
        guard records.count < capacity else {
            unreportedDrops += 1
            totalDrops += 1
            return false
        }
        records.append(record)
        return true
    }

    /// Moves the queued records into `batch` (which must be empty) and appends an overflow report
    /// when records were dropped since the last drain.
    mutating func drain(into batch: inout [LogRecord]) {
        swap(&records, &batch)
        if unreportedDrops > 0 {
            batch.append(overflowReport(dropped: unreportedDrops))
            unreportedDrops = 0
        }
    }

    func overflowReport(dropped: UInt64) -> LogRecord {
        LogRecord(
            level: .warning, className: "LogSystem", function: "drain(into:)", file: #fileID, line: #line,
            message: "log sink '\(sinkName)' dropped \(dropped) records: its queue (capacity \(capacity)) was full",
            fields: ["sink": .string(sinkName), "dropped": .int(dropped), "capacity": .int(capacity), "droppedTotal": .int(totalDrops)])
    }
}
