import ArgumentParser
import CastlineLogs
import Glibc

/// `castline logs timeline --html FILE`: one self-contained page, no network.
struct LogsTimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Write one self-contained HTML page (no network): sessions per device on a time axis, state changes, requests and failures.",
        discussion: "Traffic records (CastChannel.* at debug) give the request marks; without them the page shows sessions and failures.")
    @OptionGroup var input: LogInputOptions
    @OptionGroup var filters: LogFilterOptions
    @Option(name: .long, help: "The HTML file to write (- for standard output).")
    var html: String
    @Option(name: .long, help: "The page title.")
    var title = "castline timeline"

    func run() async throws {
        let filter = try filters.filter()
        var report = LogReadReport()
        var builder = TimelineBuilder()
        try input.read(filter: filter, report: &report) { entry in
            builder.add(entry)
            return true
        }
        var notes = [report.summary]
        if report.records == 0 { notes.append("no records matched") }
        let page = TimelineHTML.render(builder.model(title: title, notes: notes))
        try Self.writePage(page, to: html, command: "timeline", summary: report.summary)
    }

    /// Writes an HTML page to `path` (replaced atomically: a reader never sees half a page), or
    /// to standard output for `-`; says where on stderr. Shared by `timeline` and `report`.
    static func writePage(_ page: String, to path: String, command: String, summary: String) throws {
        if path == "-" {
            printLine(page)
            return
        }
        do { try writeFile(path + ".tmp", page) } catch {
            printError("castline logs \(command): cannot write \(path): \(error)")
            throw CastlineExit.failure
        }
        guard rename(path + ".tmp", path) == 0 else {
            printError("castline logs \(command): cannot write \(path): \(String(cString: strerror(errno)))")
            throw CastlineExit.failure
        }
        printError("castline logs \(command): wrote \(path) (\(page.utf8.count) bytes); \(summary)")
    }
}
