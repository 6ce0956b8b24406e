import CastCore
import CastLogging
import CastPluginHost
import CastTestSupport
import Foundation
import Testing

/// The JSON Lines sink plugin, loaded from its built `.so`: schema, rotation, whole lines after kill -9.
@Suite struct JSONSinkTests {
    static let plugin = BuiltProducts.library("CastlinePluginJSONSink")

    func openHost() throws -> PluginHostRig {
        let rig = try PluginHostRig(paths: [Self.plugin])
        rig.host.loadAll()
        #expect(rig.host.plugins.map(\.id) == ["json-sink"])
        return rig
    }

    /// Non-blank lines of a file, each parsed (a parse failure fails the test with the line).
    func lines(_ path: String) throws -> [JSONValue] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "\(path) ends inside a line")
        return try text.split(separator: "\n").filter { !$0.allSatisfy { $0 == " " } }.map { line in
            do { return try JSONValue.parse(String(line)) } catch {
                Issue.record("not JSON: \(line.prefix(200))")
                throw error
            }
        }
    }

    @Test func recordsCarryTheDocumentedSchema() throws {
        let rig = try openHost()
        let folder = ScratchFolder("json")
        defer { folder.remove() }
        let path = folder.path + "/castline.jsonl"
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)"}"#)
        let system = LogSystem()
        system.addSink(sink)
        let log = Logger(class: "CastSession", system: system)
        let line: UInt = #line + 1
        log.warning("device \"Lobby\"\tgone\n\\ é€ \u{1}", ["device": "Lobby TV", "requestId": 42, "rate": 1.5, "muted": true])
        Logger(class: "CastChannel.com.google.cast.media", system: system).error("plain")
        // A record another process wrote (a plugin helper's, forwarded) keeps its own pid and role.
        system.submit(LogRecord(level: .info, className: "PingChannel", message: "from the helper", fields: ["pid": 4242, "role": "plugin-helper"]))
        #expect(system.shutdown())
        sink.close()
        let records = try lines(path)
        #expect(records.count == 3)
        let r = try #require(records.first)
        #expect(r["severity_number"] == 13)
        #expect(r["severity_text"] == "WARN")
        #expect(r["level"] == "warning")
        #expect(r["class"] == "CastSession")
        #expect(r["body"]?.string == "device \"Lobby\"\tgone\n\\ é€ \u{1}")
        #expect(r["attributes"]?["device"] == "Lobby TV")
        #expect(r["attributes"]?["requestId"] == 42)
        #expect(r["attributes"]?["rate"]?.double == 1.5)
        #expect(r["attributes"]?["muted"] == true)
        #expect(r["code.filepath"]?.string == "CastPluginHostTests/JSONSinkTests.swift")
        #expect(r["code.lineno"]?.int == Int64(line))
        #expect(r["code.function"]?.string == "recordsCarryTheDocumentedSchema()")
        // time and time_unix_nano are the same instant.
        let nanos = try #require(r["time_unix_nano"]?.int)
        let seconds = Date(timeIntervalSince1970: Double(nanos / 1_000_000_000))
        let formatter = ISO8601DateFormatter()
        let expected = formatter.string(from: seconds).dropLast() // "…:SSZ" → "…:SS"
        let time = try #require(r["time"]?.string)
        #expect(time.hasPrefix(String(expected) + "."), "\(time) vs \(expected)")
        #expect(time.hasSuffix(String(format: "%09dZ", Int(nanos % 1_000_000_000))))
        #expect(abs(Double(nanos) / 1e9 - Date().timeIntervalSince1970) < 60)
        // Every record names the process that wrote it (the host's role: embedded in a test).
        let own: JSONValue = ["pid": .int(Int64(getpid())), "role": "embedded"]
        #expect(records[1]["attributes"] == own)
        #expect(r["attributes"]?["pid"] == own["pid"] && r["attributes"]?["role"] == "embedded")
        #expect(records[1]["severity_number"] == 17)
        #expect(records[2]["attributes"] == ["pid": 4242, "role": "plugin-helper"])
    }

    /// Numbers are written two digits at a time: every digit count, both signs, the extremes;
    /// nanoseconds with leading zeros; line numbers of every width.
    @Test func integersTimesAndLinesOfEveryWidthAreExact() throws {
        let rig = try openHost()
        let folder = ScratchFolder("numbers")
        defer { folder.remove() }
        let path = folder.path + "/n.jsonl"
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)"}"#)
        var values: [Int64] = [0, Int64.max, Int64.min, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0..<19 {
            values += [power - 1, power, power + 1, -power, -(power - 1)]
            if power <= Int64.max / 10 { power *= 10 }
        }
        let times: [UInt64] = [1_795_000_000_000_000_000, 1_795_000_000_000_000_007, 1_795_000_000_090_000_000,
                               1_795_000_000_999_999_999, 1_795_000_001_100_000_000]
        var batch: [LogRecord] = []
        for (index, value) in values.enumerated() {
            let time = times[index % times.count]
            let line = UInt([0, 7, 42, 100, 9_999, 123_456][index % 6])
            batch.append(LogRecord(timestampNanos: time, level: .info, className: "Numbers", file: "F.swift", line: line,
                                   message: "n", fields: ["value": .int(value)]))
        }
        sink.write(batch)
        sink.close()
        let records = try lines(path)
        #expect(records.map { $0["attributes"]?["value"]?.int } == values.map { Optional($0) })
        for (index, record) in records.enumerated() {
            let time = times[index % times.count]
            #expect(record["time_unix_nano"]?.int == Int64(time))
            #expect(record["time"]?.string?.hasSuffix(String(format: ".%09dZ", Int(time % 1_000_000_000))) == true)
            #expect(record["code.lineno"]?.int == Int64([0, 7, 42, 100, 9_999, 123_456][index % 6]))
        }
    }

    /// Escapes at every offset of the scanner's blocks, next to multi-byte UTF-8, survive the round trip.
    @Test func escapesAtEveryOffsetRoundTrip() throws {
        let rig = try openHost()
        let folder = ScratchFolder("escapes")
        defer { folder.remove() }
        let path = folder.path + "/e.jsonl"
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)"}"#)
        let system = LogSystem()
        system.addSink(sink)
        let log = Logger(class: "Escapes", system: system)
        var expected: [String] = []
        // Plain strings of every length around the scanner's 4-, 8- and 16-byte loads (short
        // path, whole blocks, the overlapping last block).
        for length in 0...40 {
            let text = String((0..<length).map { Character(Unicode.Scalar(UInt8(0x41 + $0 % 26))) })
            expected.append(text)
            log.info(text, ["plain": .string(text)])
        }
        for special in ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\t", "é", "€", "😀", "\u{7F}"] {
            for before in 0..<34 {
                for after in [0, 1, 3, 7, 8, 9, 15, 16, 17] {
                    let text = String(repeating: "a", count: before) + special + String(repeating: "z", count: after)
                    expected.append(text)
                    log.info(text, ["k\(special)": .string(text)])
                }
            }
        }
        #expect(system.shutdown())
        sink.close()
        let records = try lines(path)
        #expect(records.map { $0["body"]?.string ?? "?" } == expected)
        let attributeValues: [String] = records.map { r in
            guard let object = r["attributes"]?.object else { return "?" }
            return object.map { $0.value.string ?? "?" }.first ?? "?"
        }
        #expect(attributeValues == expected)
    }

    /// /dev/full fails every write with ENOSPC: the lines are counted as dropped and the host
    /// reports the sink's problem once.
    @Test func writeFailuresAreCountedAndReportedOnce() throws {
        let rig = try openHost()
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "/dev/full"}"#)
        rig.logSystem.addSink(sink)
        let log = Logger(class: "CastSession", system: rig.logSystem)
        for batch in 0..<3 {
            for i in 0..<10 { log.info("record \(batch)-\(i)") }
            rig.logSystem.flush()
        }
        let reports = rig.records(class: "PluginLogSink")
        #expect(reports.count == 1, "\(reports.map(\.message))")
        #expect(reports.first?.message.contains("write to /dev/full failed: No space left on device") == true)
        #expect(sink.pluginDropped >= 30)
        rig.logSystem.removeSinks(named: "json")
        sink.close()
    }

    @Test func unknownOptionIsRefusedWithTheAllowedKeys() throws {
        let rig = try openHost()
        #expect {
            try rig.host.openLogSink(id: "json", options: #"{"pth": "/tmp/x"}"#)
        } throws: { error in
            let text = "\(error)"
            return text.contains("unknown option \"pth\"") && text.contains("max_bytes") && text.contains("json-sink")
        }
        #expect(rig.hostErrors.count == 1)
    }

    @Test func unwritablePathIsRefused() throws {
        let rig = try openHost()
        #expect(throws: PluginLoadError.self) {
            try rig.host.openLogSink(id: "json", options: #"{"path": "/nonexistent/dir/castline.jsonl"}"#)
        }
        #expect(rig.hostErrors.first?.message.contains("/nonexistent/dir/castline.jsonl") == true)
    }

    /// A path that is not a regular file (here a FIFO; in the field `/dev/null`) is written like
    /// stdout: never rotated (rotating /dev/null once renamed the device away), never padded.
    @Test func aFIFOPathIsWrittenButNeverRotatedAndAFIFOWithoutReaderIsRefused() throws {
        let rig = try openHost()
        let folder = ScratchFolder("json-fifo")
        defer { folder.remove() }
        let path = folder.path + "/collector.fifo"
        #expect(mkfifo(path, 0o600) == 0)
        // No reader: refused at once with the reason (not a hang).
        #expect(throws: PluginLoadError.self) { _ = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)"}"#) }
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        nonisolated(unsafe) var received = [UInt8]()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Until 300 lines arrived or 10 s passed (EOF before the writer opens is not the end).
            var buffer = [UInt8](repeating: 0, count: 65_536)
            _ = pollUntilBlocking(timeout: 10) {
                var p = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, 100)
                while case let n = read(reader, &buffer, buffer.count), n > 0 { received += buffer[0..<n] }
                return received.count(where: { $0 == 0x0A }) >= 300
            }
            done.signal()
        }
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)", "max_bytes": 4096, "max_files": 2}"#)
        let system = LogSystem()
        system.addSink(sink)
        let log = Logger(class: "CastSession", system: system)
        for i in 0..<300 { log.info("record \(i) with some text to pass max_bytes several times", ["device": "Lobby TV", "i": .int(i)]) }
        #expect(system.shutdown())
        sink.close()
        #expect(done.wait(timeout: .now() + 10) == .success)
        close(reader)
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(access(path + ".1", F_OK) != 0, "nothing was rotated")
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 300, "one line per record, no padding lines")
        #expect(lines.allSatisfy { (try? JSONValue.parse(String($0))) != nil })
    }

    /// The reader of a FIFO goes away: the sink's writes fail with EPIPE (reported, counted)
    /// instead of SIGPIPE ending the process.
    @Test func aFIFOWhoseReaderWentAwayIsAReportedProblemNotSIGPIPE() throws {
        let rig = try openHost()
        let folder = ScratchFolder("json-fifo-epipe")
        defer { folder.remove() }
        let path = folder.path + "/collector.fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        let sink = try rig.host.openLogSink(id: "json", options: #"{"path": "\#(path)"}"#)
        close(reader)
        let system = LogSystem()
        system.addSink(sink)
        let log = Logger(class: "CastSession", system: system)
        for i in 0..<10 { log.info("record \(i)") }
        #expect(system.flush())
        #expect(sink.problem?.contains("Broken pipe") == true, "\(sink.problem ?? "no problem reported")")
        #expect(system.shutdown())
        sink.close()
    }

    @Test func rotationKeepsMaxFilesOfAtMostMaxBytesInOrder() throws {
        let folder = ScratchFolder("rotate")
        defer { folder.remove() }
        let path = folder.path + "/castline.jsonl"
        let writer = try LogWriterProcess.run(plugin: Self.plugin, options: #"{"path":"\#(path)","max_bytes":16384,"max_files":3}"#,
                                              seconds: 30, maxRecords: 400)
        #expect(writer.terminationStatus == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["castline.jsonl", "castline.jsonl.1", "castline.jsonl.2"])
        var sequences: [Int64] = []
        for name in ["castline.jsonl.2", "castline.jsonl.1", "castline.jsonl"] {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: folder.path + "/" + name)[.size] as? Int)
            #expect(size <= 16384, "\(name) has \(size) bytes")
            sequences += try lines(folder.path + "/" + name).map { $0["attributes"]?["seq"]?.int ?? -1 }
        }
        // Contiguous across files, oldest file first, ending with the last record written.
        #expect(sequences.last == 399)
        #expect(sequences == Array((sequences.first ?? 0)...399))
        #expect((sequences.first ?? 0) > 0, "the oldest records were rotated away")
    }

    @Test func killNineLeavesOnlyWholeLines() async throws {
        let folder = ScratchFolder("kill")
        defer { folder.remove() }
        let path = folder.path + "/castline.jsonl"
        // Five writers killed at different moments, appending to the same file.
        var boundaries: [Int] = []
        for round in 0..<5 {
            let writer = try LogWriterProcess.start(plugin: Self.plugin, options: #"{"path":"\#(path)","max_bytes":1073741824}"#,
                                                    seconds: 20, maxRecords: 100_000)
            // Behaviour, not a wait: the writer is killed 40, 93, 146, … ms into its run (a
            // different moment of its writing each round).
            try await Task.sleep(for: .milliseconds(40 + 53 * round))
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            #expect(writer.terminationReason == .uncaughtSignal || writer.terminationStatus == 0)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            boundaries.append(size)
        }
        let data = try #require(FileManager.default.contents(atPath: path))
        #expect(data.last == 0x0A, "the file ends inside a line")
        // Every line is whole: one record per line (a cut line glued to the next writer's first
        // line would hold two), a JSON object from its first byte to its closing brace.
        var offset = 0
        var lines = 0
        var fullyParsed = 0
        let marker = Array(#""time_unix_nano":"#.utf8)
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let base = raw.baseAddress!
            // memchr/memmem: fast even in a debug build (the file holds tens of MB).
            while offset < raw.count {
                let end = memchr(base + offset, 0x0A, raw.count - offset).map { $0 - UnsafeMutableRawPointer(mutating: base) } ?? raw.count
                var last = end - 1
                while last >= offset, raw[last] == 0x20 { last -= 1 }
                if last >= offset { // not a blank padding line
                    lines += 1
                    let line = UnsafeRawBufferPointer(rebasing: raw[offset...last])
                    let ok = raw[offset] == UInt8(ascii: "{") && raw[last] == UInt8(ascii: "}")
                        && Self.occurrences(of: marker, in: line) == 1
                    #expect(ok, "broken line at byte \(offset): \(String(decoding: line.prefix(120), as: UTF8.self))")
                    // Lines next to where a writer was killed are parsed in full.
                    if boundaries.contains(where: { abs($0 - offset) < 8192 }) {
                        #expect((try? JSONValue.parse(bytes: line)) != nil, "not JSON at byte \(offset)")
                        fullyParsed += 1
                    }
                }
                offset = end + 1
            }
        }
        #expect(lines > 5)
        #expect(fullyParsed >= 5)
        // A reopening sink found nothing to repair: no JSONSink warning line.
        #expect(!data.withUnsafeBytes { Self.occurrences(of: Array(#""class":"JSONSink""#.utf8), in: $0) > 0 })
    }

    /// Non-overlapping-start count of `needle` in `haystack` (memchr + memcmp: fast in debug builds).
    static func occurrences(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int {
        guard let start = haystack.baseAddress, let first = needle.first, haystack.count >= needle.count else { return 0 }
        var count = 0
        var offset = 0
        while haystack.count - offset >= needle.count,
              let hit = memchr(start + offset, Int32(first), haystack.count - offset - needle.count + 1) {
            let at = UnsafeRawPointer(hit) - start
            if needle.withUnsafeBytes({ memcmp(hit, $0.baseAddress!, needle.count) }) == 0 { count += 1 }
            offset = at + 1
        }
        return count
    }

    @Test func partialLastLineFromAnEarlierCrashIsCutOnOpenAndReported() throws {
        let folder = ScratchFolder("repair")
        defer { folder.remove() }
        let path = folder.path + "/castline.jsonl"
        try #"{"body":"complete"}"#.appending("\n").appending(#"{"body":"cut in the mid"#).write(toFile: path, atomically: false, encoding: .utf8)
        let writer = try LogWriterProcess.run(plugin: Self.plugin, options: #"{"path":"\#(path)"}"#, seconds: 10, maxRecords: 3)
        #expect(writer.terminationStatus == 0)
        let records = try lines(path)
        let first: String? = records.first?["body"]?.string
        #expect(first == "complete")
        #expect(records[1]["class"] == "JSONSink")
        #expect(records[1]["level"] == "warning")
        #expect(records[1]["body"]?.string?.contains("partial last line (23 bytes)") == true)
        #expect(records.count == 5)
    }
}

/// The `castline-test-logwriter` fixture: a separate process that drives a sink plugin.
enum LogWriterProcess {
    static let executable = BuiltProducts.folder + "/castline-test-logwriter"

    /// Starts the writer and returns once it printed "ready" (first batch written), bounded to 10 s.
    static func start(plugin: String, sink: String = "json", options: String, seconds: Double, maxRecords: Int? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [plugin, sink, options, String(seconds)] + (maxRecords.map { [String($0)] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let handle = pipe.fileHandleForReading
        let deadline = Date().addingTimeInterval(10)
        var seen = Data()
        while Date() < deadline, !String(decoding: seen, as: UTF8.self).contains("ready") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        #expect(String(decoding: seen, as: UTF8.self).contains("ready"), "the writer did not start: \(String(decoding: seen, as: UTF8.self))")
        return process
    }

    /// Runs the writer to completion (bounded by its own `seconds`).
    static func run(plugin: String, sink: String = "json", options: String, seconds: Double, maxRecords: Int) throws -> Process {
        let process = try start(plugin: plugin, sink: sink, options: options, seconds: seconds, maxRecords: maxRecords)
        process.waitUntilExit()
        return process
    }
}
