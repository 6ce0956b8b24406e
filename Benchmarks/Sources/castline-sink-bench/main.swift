// castline-sink-bench: log-sink plugins loaded from their .so, as castline loads them.
//
//   castline-sink-bench json PLUGIN_DIR SCRATCH_DIR
//     JSON sink throughput on one core: the sink's worker-thread work (record → C structs → JSON
//     line → page-bounded write) timed with the thread's CPU clock around each batch handed over
//     (`take`, as the pipeline does; the records are pre-built and each batch copied untimed); default
//     rotation (2 MiB × 5) and no rotation. Then end to end through LogSystem (caller + worker).
//   castline-sink-bench json-isolated PLUGIN_DIR SCRATCH_DIR
//     The JSON sink in its helper process (`plugins.isolated`, `castline plugin-host` from
//     PLUGIN_DIR): batches of 256 realistic records handed to the sink as the pipeline does, the
//     wall time until the helper has written every line (its socket's back-pressure paces the
//     caller), against the same run in process. Goal: >= 300,000 records/s isolated.
//   castline-sink-bench journald PLUGIN_DIR
//     Run inside a journald's mount namespace (Benchmarks/journald-sink.sh). The caller logs as
//     fast as it can while journald is saturated: caller-side ns/op (median and p99 of 1,000-record
//     slices), records delivered and dropped (counted by the sink queue), journald's rate.
//
// One JSON object per line: {"name":…, "value":…, "unit":…, …}.
import CastLogging
import CastPluginHost
#if canImport(Glibc)
import Glibc
#endif

func nanos(_ clock: clockid_t) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func emit(_ name: String, _ value: Double, _ unit: String, _ extra: [String: String] = [:]) {
    var fields = ["\"name\":\"\(name)\"", "\"value\":\((value * 100).rounded() / 100)", "\"unit\":\"\(unit)\""]
    for (k, v) in extra.sorted(by: { $0.key < $1.key }) { fields.append("\"\(k)\":\(v)") }
    print("{" + fields.joined(separator: ",") + "}")
}

/// Plain records, GCKLogger style: class, message, source location, no fields.
func makePlainRecords(_ n: Int) -> [LogRecord] {
    (0..<n).map { i in
        LogRecord(level: .info, className: "CastSession", function: "didReceive(_:)", file: "CastSender/CastSession.swift", line: 212,
                  message: "media status: PLAYING at \(i % 600).5 s")
    }
}

/// Realistic records: a traffic record with five fields, ~100-byte message.
func makeRecords(_ n: Int) -> [LogRecord] {
    (0..<n).map { i in
        LogRecord(level: .debug, className: "CastChannel.com.google.cast.media", function: "channelRead(context:data:)",
                  file: "CastProtocol/TrafficLogHandler.swift", line: 88,
                  message: "in MEDIA_STATUS from 7f3c1a9e-0b44 playerState=PLAYING currentTime=\(i % 600).5 requestId=\(i)",
                  fields: ["device": "7f3c1a9e0b444d1e9a3f5b8c2d6e4f10", "session": "b2c4-77", "requestId": .int(i),
                           "namespace": "urn:x-cast:com.google.cast.media", "bytes": 412])
    }
}

func loadHost(_ dir: String) -> PluginHost {
    let system = LogSystem(filter: LoggerFilter(minimumLevel: .warning))
    system.addSink(ConsoleLogSink())
    let host = PluginHost(configuration: PluginHostConfiguration(searchPath: PluginSearchPath(commandLine: [dir], executableFolder: nil),
                                                                 featureKinds: [.logSink]), logSystem: system)
    host.loadAll()
    return host
}

func jsonBench(pluginDir: String, scratch: String) throws {
    let host = loadHost(pluginDir)
    // `CASTLINE_BENCH_SCALE` (e.g. 0.01) shrinks the run and `CASTLINE_BENCH_ONLY` picks the
    // configurations whose label starts with it: for profiling and instruction counts.
    let scale = getenv("CASTLINE_BENCH_SCALE").flatMap { Double(String(cString: $0)) } ?? 1
    let only = getenv("CASTLINE_BENCH_ONLY").map { String(cString: $0) }
    let total = max(4096, Int(2_000_000 * scale))
    let batchSize = 256
    let fieldRecords = makeRecords(4096), plainRecords = makePlainRecords(4096)
    let fieldBatches = stride(from: 0, to: 4096, by: batchSize).map { Array(fieldRecords[$0..<$0 + batchSize]) }
    let plainBatches = stride(from: 0, to: 4096, by: batchSize).map { Array(plainRecords[$0..<$0 + batchSize]) }
    for (label, options, batches) in [("rotating-2MiBx5", #"{"path":"\#(scratch)/bench.jsonl"}"#, fieldBatches),
                                      ("no-rotation", #"{"path":"\#(scratch)/bench-big.jsonl","max_bytes":4294967296}"#, fieldBatches),
                                      ("dev-null", #"{"path":"/dev/null","max_bytes":4294967296}"#, fieldBatches),
                                      ("plain.rotating-2MiBx5", #"{"path":"\#(scratch)/bench.jsonl"}"#, plainBatches)]
    where only.map(label.hasPrefix) ?? true {
        let sink = try host.openLogSink(id: "json", options: options)
        var samples: [Double] = []
        var bytes = 0
        for run in 0..<4 {
            unlink("\(scratch)/bench-big.jsonl")
            var cpuNanos: UInt64 = 0
            var written = 0
            var next = 0
            while written < total {
                // The batch is handed over as the pipeline does (`take`: the sink may move the
                // records out; what is left is destroyed). Copying it first is not timed.
                var batch = batches[next].map { $0 }
                let cpu0 = nanos(CLOCK_THREAD_CPUTIME_ID)
                sink.take(&batch)
                batch.removeAll(keepingCapacity: true)
                cpuNanos += nanos(CLOCK_THREAD_CPUTIME_ID) - cpu0
                next = (next + 1) % batches.count
                written += batchSize
            }
            if run > 0 { samples.append(Double(written) / (Double(cpuNanos) / 1e9)) } // run 0: warm-up
            var st = stat()
            if stat(label == "no-rotation" ? "\(scratch)/bench-big.jsonl" : "\(scratch)/bench.jsonl", &st) == 0 { bytes = Int(st.st_size) }
        }
        sink.close()
        let sorted = samples.sorted()
        emit("json-sink.\(label)", sorted[sorted.count / 2], "records/s per CPU-second",
             ["min": "\(Int(sorted.first!))", "max": "\(Int(sorted.last!))", "records": "\(total)", "goal": "1000000",
              "last_file_bytes": "\(bytes)"])
    }
    // End to end: Logger calls on this thread, the sink on its worker thread.
    guard only.map("end-to-end".hasPrefix) ?? true else { return }
    let system = LogSystem(filter: LoggerFilter(minimumLevel: .debug))
    let sink = try host.openLogSink(id: "json", options: #"{"path":"\#(scratch)/e2e.jsonl","max_bytes":4294967296}"#)
    system.addSink(sink, queueCapacity: 65_536)
    let log = Logger(class: "CastChannel.com.google.cast.media", system: system)
    let n = max(10_000, Int(1_000_000 * scale))
    let wall0 = nanos(CLOCK_MONOTONIC), cpu0 = nanos(CLOCK_THREAD_CPUTIME_ID)
    for i in 0..<n {
        log.debug("in MEDIA_STATUS playerState=PLAYING requestId=\(i)", ["device": "7f3c1a9e0b444d1e9a3f5b8c2d6e4f10", "requestId": .int(i)])
    }
    let callerNs = Double(nanos(CLOCK_THREAD_CPUTIME_ID) - cpu0) / Double(n)
    _ = system.flush(timeout: .seconds(60))
    let wall = Double(nanos(CLOCK_MONOTONIC) - wall0) / 1e9
    let stats = system.sinkStatistics.first!
    emit("json-sink.end-to-end", Double(stats.delivered) / wall, "records/s (wall, caller + worker)",
         ["caller_cpu_ns_per_op": "\((callerNs * 10).rounded() / 10)", "delivered": "\(stats.delivered)", "dropped": "\(stats.dropped)"])
    _ = system.shutdown()
    sink.close()
    unlink("\(scratch)/e2e.jsonl")
    unlink("\(scratch)/bench-big.jsonl")
}

/// Lines in a file (newlines counted), 0 when it cannot be read.
func lineCount(_ path: String) -> Int {
    guard let file = fopen(path, "r") else { return 0 }
    defer { fclose(file) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var lines = 0
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        for i in 0..<n where buffer[i] == 10 { lines += 1 }
    }
    return lines
}

func isolatedJSONBench(pluginDir: String, scratch: String) throws {
    let total = 1_000_000, batchSize = 256
    let records = makeRecords(4096)
    let batches = stride(from: 0, to: 4096, by: batchSize).map { Array(records[$0..<$0 + batchSize]) }
    var results: [String: [Double]] = [:]
    for round in 0..<4 {
        for isolated in [false, true] {
            let system = LogSystem(filter: LoggerFilter(minimumLevel: .warning))
            system.addSink(ConsoleLogSink())
            var configuration = PluginHostConfiguration(searchPath: PluginSearchPath(commandLine: [pluginDir], executableFolder: nil),
                                                        featureKinds: [.logSink])
            configuration.scanner = PluginScanner(executable: pluginDir + "/castline", timeout: 10)
            if isolated { configuration.isolatedPlugins = ["json-sink"] }
            let host = PluginHost(configuration: configuration, logSystem: system)
            host.loadAll()
            let path = "\(scratch)/isolated-bench.jsonl"
            unlink(path)
            let sink = try host.openAnyLogSink(id: "json", options: #"{"path":"\#(path)","max_bytes":4294967296}"#)
            let wall0 = nanos(CLOCK_MONOTONIC)
            var written = 0, next = 0
            while written < total {
                var batch = batches[next]
                sink.take(&batch)
                next = (next + 1) % batches.count
                written += batchSize
            }
            sink.flush()
            // The helper has written every line when the file has them all (bounded wait).
            var lines = lineCount(path)
            let deadline = nanos(CLOCK_MONOTONIC) + 120_000_000_000
            while isolated, lines < written, nanos(CLOCK_MONOTONIC) < deadline {
                usleep(2_000)
                lines = lineCount(path)
            }
            let wall = Double(nanos(CLOCK_MONOTONIC) - wall0) / 1e9
            if let s = sink as? IsolatedLogSink { s.close() } else if let s = sink as? PluginLogSink { s.close() }
            host.shutdown()
            unlink(path)
            guard lines == written else {
                print("error: \(isolated ? "isolated" : "in-process") sink wrote \(lines) of \(written) records")
                exit(1)
            }
            if round > 0 { results[isolated ? "isolated" : "in-process", default: []].append(Double(written) / wall) } // round 0: warm-up
        }
    }
    for (label, samples) in results.sorted(by: { $0.key < $1.key }) {
        let sorted = samples.sorted()
        emit("json-sink.\(label).wall", sorted[sorted.count / 2], "records/s (wall, caller to file)",
             ["min": "\(Int(sorted.first!))", "max": "\(Int(sorted.last!))", "records": "\(total)",
              "goal": label == "isolated" ? "300000" : "null"])
    }
}

func journaldBench(pluginDir: String) throws {
    let host = loadHost(pluginDir)
    // The blocking alternative first: the sink called synchronously on the caller's thread.
    let direct = try host.openLogSink(id: "journald", options: #"{"identifier":"castline-bench-direct"}"#)
    let sample = makeRecords(1)
    let directN = 20_000
    let d0 = nanos(CLOCK_MONOTONIC)
    for _ in 0..<directN { direct.write(sample) }
    let directNs = Double(nanos(CLOCK_MONOTONIC) - d0) / Double(directN)
    direct.close()
    emit("journald-sink.synchronous-send", directNs, "ns/op (sd_journal_sendv on the caller's thread, for comparison)",
         ["records": "\(directN)"])

    let system = LogSystem(filter: LoggerFilter(minimumLevel: .debug))
    let sink = try host.openLogSink(id: "journald", options: #"{"identifier":"castline-bench"}"#)
    system.addSink(sink) // default queue: 8,192 records
    let log = Logger(class: "CastChannel.com.google.cast.media", system: system)
    let n = 300_000
    var perCall = [UInt32](repeating: 0, count: n)
    let wall0 = nanos(CLOCK_MONOTONIC)
    for i in 0..<n {
        let t0 = nanos(CLOCK_MONOTONIC)
        log.debug("in MEDIA_STATUS playerState=PLAYING requestId=\(i)", ["device": "7f3c1a9e0b444d1e9a3f5b8c2d6e4f10", "requestId": .int(i)])
        perCall[i] = UInt32(min(nanos(CLOCK_MONOTONIC) - t0, UInt64(UInt32.max)))
    }
    let callerWall = Double(nanos(CLOCK_MONOTONIC) - wall0) / 1e9
    let before = system.sinkStatistics.first!
    let flushStart = nanos(CLOCK_MONOTONIC)
    _ = system.flush(timeout: .seconds(120))
    let drainSeconds = Double(nanos(CLOCK_MONOTONIC) - flushStart) / 1e9
    let stats = system.sinkStatistics.first!
    perCall.sort()
    func pct(_ p: Double) -> UInt32 { perCall[min(n - 1, Int(Double(n) * p))] }
    emit("journald-sink.caller", Double(pct(0.5)), "ns/op (caller while journald is saturated, median of each call)",
         ["p99_ns": "\(pct(0.99))", "p999_ns": "\(pct(0.999))", "max_ns": "\(perCall[n - 1])", "records": "\(n)",
          "caller_seconds": "\((callerWall * 1000).rounded() / 1000)"])
    emit("journald-sink.delivered", Double(stats.delivered), "records",
         ["dropped_queue_full": "\(stats.dropped)", "dropped_by_sink": "\(sink.pluginDropped)", "queued_at_end_of_logging": "\(before.queued)",
          "drain_seconds": "\((drainSeconds * 1000).rounded() / 1000)"])
    emit("journald-sink.rate", Double(stats.delivered) / (callerWall + drainSeconds), "records/s into journald")
    _ = system.shutdown()
    sink.close()
}

let args = CommandLine.arguments
guard args.count >= 3 else {
    print("usage: castline-sink-bench json|json-isolated PLUGIN_DIR SCRATCH_DIR | journald PLUGIN_DIR")
    exit(2)
}
do {
    switch args[1] {
    case "json": try jsonBench(pluginDir: args[2], scratch: args.count > 3 ? args[3] : "/tmp")
    case "json-isolated": try isolatedJSONBench(pluginDir: args[2], scratch: args.count > 3 ? args[3] : "/tmp")
    case "journald": try journaldBench(pluginDir: args[2])
    default:
        print("unknown benchmark \(args[1])")
        exit(2)
    }
} catch {
    print("error: \(error)")
    exit(1)
}
