import CastLogging
import CastPluginHost
import CastlineLogs
import CastTestSupport
import Foundation
import Testing

/// The journald sink plugin against a real systemd-journald started by the test, read back with
/// `journalctl -o json`; and its behaviour when journald is absent or dead.
@Suite(.serialized) struct JournaldSinkTests {
    static let plugin = BuiltProducts.library("CastlinePluginJournaldSink")
    static let writer = BuiltProducts.folder + "/castline-test-logwriter"

    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: systemd-journald in a mount namespace (unshare -m)"))
    func entriesCarryEveryFieldUnderAValidName() throws {
        let journald = try JournaldHarness()
        defer { journald.stop() }
        let (status, output) = try journald.run([Self.writer, Self.plugin, "journald", #"{"identifier":"castline-test"}"#, "20", "40"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("done 40 dropped 0 problem none"), "\(output)")
        var entries: [[String: Any]] = []
        _ = try pollUntilBlocking(timeout: 30, every: .milliseconds(50)) { // journald may still be writing
            entries = try journald.entries(identifier: "castline-test")
            return entries.count >= 40
        }
        #expect(entries.count == 40)
        #expect(entries.map { $0["SEQ"] as? String } == (0..<40).map { String($0) })
        let e = try #require(entries.first)
        #expect(e["PRIORITY"] as? String == "6")
        #expect(e["SYSLOG_IDENTIFIER"] as? String == "castline-test")
        #expect(e["CASTLINE_CLASS"] as? String == "LogWriter")
        #expect(e["CODE_FILE"] as? String == "LogWriter/main.c")
        #expect(e["CODE_LINE"] as? String == "42")
        #expect(e["CODE_FUNC"] as? String == "main")
        #expect(e["DEVICE"] as? String == "Living Room TV")
        #expect(e["REQUEST_ID"] as? String == "1000")  // requestId
        #expect(e["X_WEIRD_KEY"] as? String == "w")     // x-weird.key
        #expect(e["CASTLINE_MESSAGE"] as? String == "shadow") // message: would collide with MESSAGE
        #expect(e["F9LIVES"] as? String == "true")       // 9lives: no leading digit
        #expect(e["PRIVATE"] as? String == "1.5")        // _private: no leading underscore
        #expect(e["_TRANSPORT"] as? String == "journal")
        #expect((e["CASTLINE_TIME_NS"] as? String).flatMap(UInt64.init) != nil)
        let types = Set(((e["CASTLINE_TYPES"] as? String) ?? "").split(separator: ",").map(String.init))
        #expect(types.isSuperset(of: ["REQUEST_ID:i", "F9LIVES:b", "PRIVATE:d"]) && !types.contains { $0.hasPrefix("DEVICE:") }, "\(types)")
        // Multi-line messages arrive whole (libsystemd's binary field form).
        #expect(entries.contains { ($0["MESSAGE"] as? String)?.contains("newline\n unicode é€") == true })
    }

    /// `castline logs` reads the same entries back: through sd_journal (with a field match) and
    /// from `journalctl -o json` lines, with castline's names and levels.
    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: systemd-journald in a mount namespace (unshare -m)"))
    func castlineLogsReadsTheEntriesBackFromTheJournal() throws {
        let journald = try JournaldHarness()
        defer { journald.stop() }
        let (status, output) = try journald.run([Self.writer, Self.plugin, "journald", #"{"identifier":"castline-logs"}"#, "20", "30"])
        #expect(status == 0, "\(output)")
        var lines: [String] = []
        _ = try pollUntilBlocking(timeout: 30, every: .milliseconds(50)) { // journald may still be writing
            lines = try journald.journalLines(identifier: "castline-logs")
            return lines.count >= 30
        }
        #expect(lines.count == 30)
        let decoded = lines.compactMap { try? LogLineDecoder.decode($0).get() }
        #expect(decoded.count == 30)
        let first = try #require(decoded.first)
        #expect(first.className == "LogWriter" && first.level == .info && first.text("device") == "Living Room TV")
        #expect(first.integer("requestId") == 1000 && first.file == "LogWriter/main.c" && first.line == 42)
        // Numbers and booleans come back as they were logged (CASTLINE_TYPES), text stays text.
        #expect(first.attributes["requestId"] == .int(1000) && first.attributes["private"] == .double(1.5))
        #expect(first.attributes["f9lives"] == .bool(true) && first.attributes["device"] == "Living Room TV")
        #expect(first.attributes["castlineTypes"] == nil)

        var report = LogReadReport()
        var read: [LogEntry] = []
        try JournalReader(directory: journald.journalDirectory, identifier: "castline-logs").run(filter: LogFilter(), report: &report) {
            read.append($0)
            return true
        }
        #expect(read.count == 30 && report.records == 30)
        #expect(read.map { $0.text("seq") } == decoded.map { $0.text("seq") })
        #expect(read.map(\.time) == read.map(\.time).sorted())
        var filter = LogFilter()
        filter.requestID = 1000
        filter.device = "Living Room TV"
        var matched = 0
        var filtered = LogReadReport()
        try JournalReader(directory: journald.journalDirectory, identifier: "castline-logs").run(filter: filter, report: &filtered) { _ in
            matched += 1
            return true
        }
        let expected = decoded.filter { filter.matches($0) }.count
        #expect(expected >= 1 && expected < 30, "the match selects some entries, not all")
        #expect(matched == expected)
        filter.requestID = 999
        matched = 0
        try JournalReader(directory: journald.journalDirectory, identifier: "castline-logs").run(filter: filter, report: &filtered) { _ in
            matched += 1
            return true
        }
        #expect(matched == 0)
        #expect(throws: JournalReader.Failure.self) {
            try JournalReader(directory: "/nonexistent/journal").run(filter: LogFilter(), report: &filtered) { _ in true }
        }
    }

    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: systemd-journald in a mount namespace (unshare -m)"))
    func staleSocketIsDetectedAndEveryRecordCounted() throws {
        let journald = try JournaldHarness()
        defer { journald.stop() }
        journald.kill() // SIGTERM leaves the socket file behind
        let (status, output) = try journald.run([Self.writer, Self.plugin, "journald", "{}", "20", "25"])
        #expect(status == 0)
        #expect(output.contains("done 25 dropped 25 problem journald refuses entries (Connection refused): the socket /run/systemd/journal/socket is stale"), "\(output)")
    }

    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: a private /run in a mount namespace (unshare -m)"))
    func absentJournaldIsDetectedEvenThoughLibsystemdReportsSuccess() throws {
        let (status, output) = try JournaldHarness.capture({
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            p.arguments = ["-m", "--propagation", "private", "sh", "-c", #"mount -t tmpfs none /run && exec "$@""#, "sh",
                           Self.writer, Self.plugin, "journald", "{}", "20", "30"]
            return p
        }(), timeout: 30)
        #expect(status == 0)
        #expect(output.contains("done 30 dropped 30 problem journald socket /run/systemd/journal/socket not found"), "\(output)")
    }

    @Test func theHostReportsTheSinksProblemOnceToTheOtherSinks() throws {
        let rig = try PluginHostRig(paths: [Self.plugin])
        rig.host.loadAll()
        let sink = try rig.host.openLogSink(id: "journald", options: #"{"socket": "/nonexistent/castline/journal.socket"}"#)
        rig.logSystem.addSink(sink)
        let log = Logger(class: "CastSession", system: rig.logSystem)
        for batch in 0..<5 {
            for i in 0..<10 { log.info("record \(batch)-\(i)") }
            rig.logSystem.flush()
        }
        let reports = rig.records(class: "PluginLogSink")
        #expect(reports.count == 1, "\(reports.map(\.message))")
        #expect(reports.first?.level == .warning)
        #expect(reports.first?.message.contains("/nonexistent/castline/journal.socket not found") == true)
        #expect(sink.pluginDropped >= 50)
        rig.logSystem.removeSinks(named: "journald")
        sink.close()
    }
}
