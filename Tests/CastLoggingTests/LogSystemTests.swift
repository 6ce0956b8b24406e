import Testing
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
@testable import CastLogging

@Suite struct LogSystemTests {
    @Test func queueCountsDropsAndReportsThemOnce() {
        var queue = SinkQueue(sinkName: "slow", capacity: 4)
        for i in 0..<10 { queue.push(LogRecord(level: .info, className: "T", message: "m\(i)")) }
        #expect(queue.count == 4)
        #expect(queue.totalDrops == 6)
        var batch: [LogRecord] = []
        queue.drain(into: &batch)
        #expect(batch.map(\.message).prefix(4) == ["m0", "m1", "m2", "m3"])
        let report = try! #require(batch.last)
        #expect(batch.count == 5)
        #expect(report.level == .warning)
        #expect(report.className == "LogSystem")
        #expect(report.fields["dropped"] == .int(6))
        #expect(report.message == "log sink 'slow' dropped 6 records: its queue (capacity 4) was full")
        var second: [LogRecord] = []
        queue.drain(into: &second)
        #expect(second.isEmpty)
        #expect(queue.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func hungSinkNeverBlocksTheCallerAndOverflowIsReported() throws {
        let system = LogSystem(filter: LoggerFilter(minimumLevel: .verbose))
        let gated = GatedSink()
        let fast = MemorySink(name: "fast")
        system.addSink(gated, queueCapacity: 4)
        system.addSink(fast)
        let log = Logger(class: "Burst", system: system)
        for i in 0..<100 { log.info("r\(i)") }  // returns although the gated sink is stuck
        let stats = system.sinkStatistics
        #expect(stats[0].name == "gated")
        #expect(stats[0].dropped >= 92)  // at most one in-flight batch (≤ 4) plus 4 queued survive
        #expect(stats[1].dropped == 0)
        gated.open()
        #expect(system.flush(timeout: .seconds(30)))
        let received = gated.records
        let regular = received.filter { $0.className == "Burst" }
        let reports = received.filter { $0.className == "LogSystem" }
        let dropped = system.sinkStatistics[0].dropped
        #expect(UInt64(regular.count) + dropped == 100)
        let reported = reports.compactMap { r -> Int64? in if case .int(let n) = r.fields["dropped"] { return n } else { return nil } }
        #expect(UInt64(reported.reduce(0, +)) == dropped)
        #expect(fast.records.count == 100)
        #expect(system.shutdown())
    }

    @Test func flushWaitsForWritesAndCallsSinkFlush() throws {
        let (system, sink) = try makeSystem("verbose")
        let log = Logger(class: "A", system: system)
        for i in 0..<1000 { log.verbose("m\(i)") }
        #expect(system.flush())
        #expect(sink.records.count == 1000)
        #expect(sink.records.last?.message == "m999")
        #expect(sink.flushCount >= 1)
        #expect(system.shutdown())
        log.info("after shutdown goes nowhere")
        #expect(sink.records.count == 1000)
    }

    @Test func recordsHeldAtStartUpReachASinkAddedLaterOnceAndInOrder() throws {
        let system = LogSystem(filter: LoggerFilter(minimumLevel: .info))
        let console = MemorySink(name: "console")
        system.addSink(console)
        system.holdForLateSinks(capacity: 3)
        let log = Logger(class: "PluginHost", system: system)
        log.error("refused 1")
        log.debug("below the filter: never held")
        log.warning("refused 2")
        let json = MemorySink(name: "json")
        system.addSink(json)
        log.info("after the json sink opened")
        for i in 0..<3 { log.info("early for the journal \(i)") }
        let journal = MemorySink(name: "journal")
        system.addSink(journal)   // 6 records were logged, 3 kept: the first 3, and a count of the rest
        system.releaseHeld()
        log.info("live")
        let late = MemorySink(name: "late")
        system.addSink(late)       // nothing held any more
        log.info("last")
        #expect(system.flush())
        #expect(console.records.map(\.message) == ["refused 1", "refused 2", "after the json sink opened", "early for the journal 0",
                                                   "early for the journal 1", "early for the journal 2", "live", "last"])
        #expect(json.records.map(\.message) == ["refused 1", "refused 2", "after the json sink opened", "early for the journal 0",
                                                "early for the journal 1", "early for the journal 2", "live", "last"])
        let journalMessages = journal.records.map(\.message)
        #expect(journalMessages.first == "3 records logged before this sink opened were not kept (start-up buffer full)")
        #expect(journal.records.first?.fields["lost"] == .int(3) && journal.records.first?.level == .warning)
        #expect(Array(journalMessages.dropFirst()) == ["refused 1", "refused 2", "after the json sink opened", "live", "last"])
        #expect(late.records.map(\.message) == ["last"])
        #expect(system.shutdown())
    }

    @Test func theProcessIsTheEmbeddedProgramUntilTheExecutableSaysOtherwise() {
        let system = LogSystem()
        #expect(system.process.pid == getpid() && system.process.role == "embedded")
        system.process = LogProcess(role: .daemon)
        #expect(system.process == LogProcess(pid: getpid(), role: "daemon"))
        #expect(LogProcess.Role.pluginHelper.rawValue == "plugin-helper")
        #expect(LogProcess.isNamed(in: ["device": "d", "pid": 7]) && !LogProcess.isNamed(in: ["device": "d", "pids": 7]))
    }

    @Test func environmentRulesApplyAndBadOnesKeepThePreviousRules() throws {
        let (system, sink) = try makeSystem("info")
        #expect(system.applyEnvironment([:]) == nil)
        #expect(system.applyEnvironment(["CASTLINE_LOG": "warning,*Session:verbose"]) == nil)
        #expect(system.filter.ruleString == "warning,*Session:verbose")
        let error = system.applyEnvironment(["CASTLINE_LOG": "*:info,foo:verbos"])
        #expect(error?.column == 12)
        #expect(system.filter.ruleString == "warning,*Session:verbose")
        system.flush()
        let messages = sink.records.map(\.message)
        #expect(messages.contains("log rules from CASTLINE_LOG: warning,*Session:verbose"))
        #expect(messages.contains { $0.hasPrefix("rejected log rules from CASTLINE_LOG: unknown level 'verbos'") })
        #expect(sink.records.first { $0.level == .error }?.fields["column"] == .int(12))
        system.shutdown()
    }

    @Test func concurrentLoggingLosesNothing() async throws {
        let (system, sink) = try makeSystem("verbose")
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask {
                    let log = Logger(class: "T\(t)", system: system)
                    for i in 0..<500 { log.debug("\(t)-\(i)") }
                }
            }
        }
        #expect(system.flush())
        #expect(sink.records.count == 2000)
        for t in 0..<4 {
            let mine = sink.records.filter { $0.className == "T\(t)" }.map(\.message)
            #expect(mine == (0..<500).map { "\(t)-\($0)" })  // per-thread order kept
        }
        system.shutdown()
    }

    @Test func levelMappingTable() {
        #expect(LogLevel.allCases.map(\.name) == ["none", "verbose", "debug", "info", "warning", "error", "assert"])
        #expect(LogLevel.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5, 6])
        #expect(LogLevel.allCases.map(\.journaldPriority) == [nil, 7, 7, 6, 4, 3, 2])
        #expect(LogLevel.allCases.map(\.otelSeverityNumber) == [0, 1, 5, 9, 13, 17, 21])
        #expect(LogLevel.allCases.map(\.otelSeverityText) == ["UNSPECIFIED", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"])
        #expect(LogLevel.allCases.map(\.swiftLogLevel) == [nil, .trace, .debug, .info, .warning, .error, .critical])
        #expect(LogLevelMapping.level(for: .notice) == .info)
        for level in LogLevel.allCases where level != .none {
            #expect(LogLevelMapping.level(for: level.swiftLogLevel!) == level)
        }
    }

    @Test func formatterWritesOneLinePerRecord() {
        let r = LogRecord(timestampNanos: 1_700_000_000_123_456_789, level: .warning, className: "CastSession",
                          function: "start()", file: "CastSender/CastSession.swift", line: 42,
                          message: "two\nlines", fields: ["device": "Living Room", "n": 3])
        let line = LogRecordFormatter(color: false).format(r)
        #expect(line == "2023-11-14T22:13:20.123456Z WARN  CastSession: two\\nlines device=\"Living Room\" n=3 (CastSender/CastSession.swift:42 start())")
    }

    /// Control characters are escaped as JSON escapes them; a quoted field is a JSON string literal.
    @Test func formatterEscapesControlCharactersAndQuotesFields() {
        let r = LogRecord(timestampNanos: 1_700_000_000_123_456_789, level: .info, className: "CastSession",
                          function: "start()", file: "", line: 0,
                          message: "bell\u{7} esc\u{1B}[0m \"quoted\" C:\\dir", fields: ["path": "a \"b\" \\c\u{1}"])
        let line = LogRecordFormatter(color: false).format(r)
        #expect(line == #"2023-11-14T22:13:20.123456Z INFO  CastSession: bell\u0007 esc\u001b[0m "quoted" C:\dir path="a \"b\" \\c\u0001""#)
    }

    /// The console's short lines: local time, level, class, message; a debug record adds its
    /// fields and location; still one line.
    @Test func shortStyleLeavesDetailToDebugRecords() {
        let nanos: UInt64 = 1_700_000_000_123_456_789
        var info = LogRecord(timestampNanos: nanos, level: .info, className: "CastSession", function: "start()",
                             file: "CastSender/CastSession.swift", line: 42, message: "two\nlines", fields: ["device": "Living Room"])
        let formatter = LogRecordFormatter(color: false, style: .short)
        let time = LogRecordFormatter.localTime(nanos)
        #expect(time.count == 12 && time.hasSuffix(":20.123"))
        #expect(formatter.format(info) == "\(time) INFO  CastSession: two\\nlines")
        info.level = .debug
        #expect(formatter.format(info) == "\(time) DEBUG CastSession: two\\nlines device=\"Living Room\" (CastSender/CastSession.swift:42 start())")
    }
}
