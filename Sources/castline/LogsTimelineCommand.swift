import ArgumentParser
import CastlineLogs

struct LogsTimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline", abstract: "Write one self-contained HTML page: sessions per device on a time axis.")
    @OptionGroup var input: LogInputOptions
    @OptionGroup var filters: LogFilterOptions
    @Option(name: .long, help: "The HTML file to write.")
    var html: String

    func run() async throws {
        printError("castline logs timeline: not built yet")
        throw CastlineExit.failure
    }
}
