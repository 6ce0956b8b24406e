import CastCore
import CastLogging
import CastTestSupport
import CastlineLogs
import Foundation
import Testing

@Suite struct LogScanTests {
    func line(_ t: Int64, _ cls: String, _ body: String, _ attributes: JSONObject = [:]) -> String {
        LogEntry(time: t, level: .info, className: cls, body: body, attributes: attributes).json.serialized()
    }

    @Test func rotatedSetsAreReadOldestFirstAndEveryProblemIsCounted() throws {
        let scratch = ScratchFolder("logscan")
        defer { scratch.remove() }
        let folder = scratch.path
        let path = folder + "/castline.jsonl"
        try (line(1_000_000_000, "A", "oldest") + "\n").write(toFile: path + ".2", atomically: true, encoding: .utf8)
        try (line(2_000_000_000, "A", "older") + "\n" + "not json at all\n" + "    \n").write(toFile: path + ".1", atomically: true, encoding: .utf8)
        // Newest: a clock jump back of 1.5 s, a record of another schema, and a last line cut mid-record.
        try (line(5_000_000_000, "A", "newest") + "\n" + line(3_500_000_000, "A", "after the jump") + "\n"
             + #"{"other":"schema"}"# + "\n" + #"{"time":"2026-11-22T10:00:00Z","class":"A","bo"#)
            .write(toFile: path, atomically: true, encoding: .utf8)
        var report = LogReadReport()
        var bodies: [String] = []
        LogScan(inputs: [path]).run(report: &report) { bodies.append($0.body); return true }
        #expect(bodies == ["oldest", "older", "newest", "after the jump"])
        #expect(report.inputs == [path + ".2", path + ".1", path])
        #expect(report.lines == 8 && report.records == 4 && report.notJSON == 2 && report.blank == 1 && report.unknownSchema == 1)
        #expect(report.unterminatedLastLines == 1 && report.clockJumpsBack == 1 && report.largestJumpBack == 1_500_000_000)
        #expect(report.summary.contains("1 clock jump(s) back (largest 1.5 s)"))
        var missing = LogReadReport()
        LogScan(inputs: [folder + "/nope.jsonl"]).run(report: &missing) { _ in true }
        #expect(missing.missing == [folder + "/nope.jsonl"] && missing.records == 0)
    }

    @Test func linesAcrossReadChunksAndOverlongLinesAreHandled() throws {
        let scratch = ScratchFolder("logscan-big")
        defer { scratch.remove() }
        let folder = scratch.path
        let path = folder + "/big.jsonl"
        // ~10 MiB: lines straddle the 4 MiB read chunks; one 20 MiB line is over the limit and skipped.
        var text = ""
        var expected = 0
        var i: Int64 = 0
        while text.utf8.count < 10 << 20 {
            text += line(i, "CastChannel.x", "record \(i) " + String(repeating: "x", count: Int(i % 300)), ["requestId": .int(i)]) + "\n"
            expected += 1
            i += 1
        }
        text += String(repeating: "y", count: 20 << 20) + "\n" + line(i, "Z", "after the long line") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        var report = LogReadReport()
        var ids: [Int64] = []
        var last = ""
        LogScan(inputs: [path]).run(report: &report) { entry in
            if let id = entry.integer("requestId") { ids.append(id) }
            last = entry.body
            return true
        }
        #expect(ids == Array(0..<Int64(expected)))
        #expect(report.tooLong == 1 && last == "after the long line")
    }

    @Test func filtersAndTheirPrefilterAgreeOnRealLines() throws {
        let scratch = ScratchFolder("logscan-filter")
        defer { scratch.remove() }
        let folder = scratch.path
        let path = folder + "/f.jsonl"
        var lines: [String] = []
        for i in 0..<300 {
            let type = ["LOAD", "MEDIA_STATUS", "PING"][i % 3]
            lines.append(line(Int64(i) * 1_000_000, i % 2 == 0 ? "CastChannel.com.google.cast.media" : "CastSession", "m\(i)",
                              ["type": .string(type), "device": .string("dev-\(i % 4)"), "requestId": .int(Int64(i))]))
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        var filter = LogFilter()
        filter.classPatterns = [try GlobPattern("CastChannel.*media")]
        filter.messageType = "LOAD"
        filter.device = "dev-2"
        var report = LogReadReport()
        var found: [String] = []
        LogScan(inputs: [path], filter: filter).run(report: &report) { found.append($0.body); return true }
        #expect(found == stride(from: 0, to: 300, by: 1).filter { $0 % 2 == 0 && $0 % 3 == 0 && $0 % 4 == 2 }.map { "m\($0)" })
        #expect(report.records == 300)
    }
}
