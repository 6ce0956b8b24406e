import ArgumentParser
import CastCore
import CastLogging
import CastlineConfig
import CastlineLogs
import Glibc

/// `castline logs query|stats|timeline|explain`: structured log analysis.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Analyse castline's logs: JSON Lines files (rotated sets in order), journalctl -o json on stdin, or the journal.",
        discussion: """
            Inputs: files (each with its rotated older files: castline.jsonl.4 … .1, castline.jsonl), `-` for \
            standard input (JSON Lines or `journalctl -o json`), or --journal (the local journal through \
            sd_journal, or --journal-dir). Blank lines, non-JSON lines, other schemas, cut last lines and \
            clock jumps are counted and reported on stderr, never fatal.
            """,
        subcommands: [LogsQueryCommand.self, LogsStatsCommand.self, LogsReportCommand.self, LogsTimelineCommand.self, LogsExplainCommand.self])
}

/// Where records come from.
struct LogInputOptions: ParsableArguments {
    @Argument(help: "JSON Lines files (rotated sets are read oldest first) or - for standard input.")
    var inputs: [String] = []
    @Flag(name: .long, help: "Read the journal (sd_journal) instead of files.")
    var journal = false
    @Option(name: .long, help: "Read the journal files under this folder (journalctl -D).")
    var journalDir: String?
    @Option(name: .long, help: "SYSLOG_IDENTIFIER of castline's journal entries (\"\" for any).")
    var identifier = "castline"
    @Flag(name: .long, help: "Do not expand a file to its rotated set.")
    var noRotated = false

    func validate() throws {
        let fromJournal = journal || journalDir != nil
        if fromJournal && !inputs.isEmpty { throw ValidationError("give files or --journal, not both") }
        if !fromJournal && inputs.isEmpty { throw ValidationError("give log files, - for standard input, or --journal") }
    }

    /// Reads every record passing `filter`; `body` returns false to stop.
    func read(filter: LogFilter, report: inout LogReadReport, _ body: (LogEntry) -> Bool) throws {
        if journal || journalDir != nil {
            do {
                try JournalReader(directory: journalDir, identifier: identifier.isEmpty ? nil : identifier).run(filter: filter, report: &report, body)
            } catch {
                printError("castline logs: \(error)")
                throw CastlineExit.failure
            }
        } else {
            LogScan(inputs: inputs, filter: filter, expandRotated: !noRotated).run(report: &report, body)
        }
    }
}

/// The record filters shared by query, stats and timeline.
struct LogFilterOptions: ParsableArguments {
    @Option(name: .long, help: "Minimum level: verbose, debug, info, warning, error, assert.")
    var level: String?
    @Option(name: .customLong("class"), help: "A class glob in the CASTLINE_LOG grammar (CastChannel.*media). Repeatable: any matches.")
    var classes: [String] = []
    @Option(name: .long, help: "A device id, name, endpoint or peer address (globs allowed).")
    var device: String?
    @Option(name: .long, help: "An app session id or castline's local session number.")
    var session: String?
    @Option(name: .long, help: "A namespace: urn:x-cast:com.google.cast.media, com.google.cast.media or media.")
    var namespace: String?
    @Option(name: .long, help: "A message type (LOAD, MEDIA_STATUS, …).")
    var type: String?
    @Option(name: .long, help: "A request id.")
    var requestID: Int64?
    @Option(name: .long, help: "From this time: RFC 3339 (2026-11-22T10:00:00Z), a date, or an age (30s, 10m, 2h, 1d ago).")
    var since: String?
    @Option(name: .long, help: "Until this time (same forms).")
    var until: String?
    @Option(name: .long, help: "Records whose message contains this text.")
    var grep: String?

    func filter() throws -> LogFilter {
        var f = LogFilter()
        if let level {
            guard let parsed = LogLevel(parsing: level), parsed != .none else { throw ValidationError("--level: \(level) is not one of \(LogLevel.spellings)") }
            f.minimumLevel = parsed
        }
        for glob in classes {
            do { f.classPatterns.append(try GlobPattern(glob)) } catch { throw ValidationError("--class \(glob): \(error)") }
        }
        f.device = device
        f.session = session
        f.namespace = namespace
        f.messageType = type
        f.requestID = requestID
        f.text = grep
        if let since { f.since = try Self.time(since, option: "--since") }
        if let until { f.until = try Self.time(until, option: "--until") }
        return f
    }

    /// RFC 3339, a date, or an age before now (`10m`).
    static func time(_ text: String, option: String) throws -> Int64 {
        if let t = LogTime.parse(text) { return t }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        if let unit = text.last, let scale = units[unit], let n = Double(text.dropLast()), n >= 0, n.isFinite {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - Int64(n * Double(scale) * 1e9)
        }
        throw ValidationError("\(option) \(text): expected RFC 3339 (2026-11-22T10:00:00Z), a date (2026-11-22) or an age (30s, 10m, 2h, 1d)")
    }
}

struct LogsQueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query", abstract: "Print the records that pass the filters (text, or JSON Lines with --json).",
        discussion: "Exit 0 when records matched, 1 when none did (like grep), 64 on usage errors.")
    @OptionGroup var input: LogInputOptions
    @OptionGroup var filters: LogFilterOptions
    @Flag(name: .long, help: "Print records as castline JSON Lines (schema version 1).")
    var json = false
    @Option(name: .long, help: "Stop after this many records.")
    var limit: Int?
    @Flag(name: .long, help: "Keep reading the last file as it grows (and across rotation) until SIGINT/SIGTERM.")
    var follow = false
    @Flag(name: .long, help: "Print only the number of matching records.")
    var count = false

    func run() async throws {
        let filter = try filters.filter()
        var report = LogReadReport()
        var matched = 0
        let output = RecordPrinter(json: json)
        try input.read(filter: filter, report: &report) { entry in
            matched += 1
            if !count { output.print(entry) }
            return limit.map { matched < $0 } ?? true
        }
        if follow, let last = input.inputs.last, last != "-" {
            SignalWaiter.block([SIGINT, SIGTERM])
            output.flush()
            let counter = FollowCounter()
            let start = report.completeBytes
            let following = Task {
                await LogFollower.follow(path: last, from: start, filter: filter) { entry in
                    counter.add()
                    output.print(entry)
                    output.flush()
                }
            }
            Task {
                _ = await SignalWaiter.wait([SIGINT, SIGTERM])
                following.cancel()
            }
            await following.value
            matched += counter.value
        }
        output.flush()
        if count { printLine(String(matched)) }
        if report.notJSON + report.unknownSchema + report.unterminatedLastLines + report.tooLong + report.clockJumpsBack > 0 || !report.missing.isEmpty {
            printError("castline logs: " + report.summary)
        }
        if matched == 0 { throw CastlineExit.failure }
    }
}

extension GroupedStatistics.Key: ExpressibleByArgument {}

struct LogsStatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Message counts, request latency percentiles, errors, suspends, sessions, dropped records.",
        discussion: """
            Messages by namespace, type and direction (traffic records: CastChannel.* at debug); request → \
            response latency p50/p95/p99/max per request type, paired by request id and connection; errors by \
            kind (failed replies, session end reasons, error records by class); suspends with their durations \
            and reconnect attempts; sessions with their length and end reason; records dropped by log sinks.
            """)
    @OptionGroup var input: LogInputOptions
    @OptionGroup var filters: LogFilterOptions
    @Flag(name: .long, help: "JSON output.")
    var json = false
    @Option(name: .long, help: "One section per agent (site: castline's agent field, else the journal's host) or device.")
    var by: GroupedStatistics.Key?

    func run() async throws {
        let filter = try filters.filter()
        var report = LogReadReport()
        if let by {
            var grouped = GroupedStatistics(by: by)
            try input.read(filter: filter, report: &report) { entry in
                grouped.add(entry)
                return true
            }
            printLine(json ? grouped.json(read: report).serialized() : grouped.text(read: report))
            return
        }
        var stats = LogStatistics()
        try input.read(filter: filter, report: &report) { entry in
            stats.add(entry)
            return true
        }
        printLine(json ? stats.json(read: report).serialized() : stats.text(read: report))
    }
}

struct LogsReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Proof of display: per screen and content, what showed from when to when, what did not and why, and what castline could not see.",
        discussion: """
            From castline run's records alone: one interval per (screen, content), each shown (an announcement \
            labelled as one), not shown with its cause (idle, app closed, another sender) or not observed (the link \
            was down, or castline was not running: never counted as shown or as dark). A fleet summary, totals and \
            plays per content item, local times (--timezone, default the system's). --since/--until bound the \
            period; --device picks screens. --json (Unix seconds), --csv (one row per interval) or --html FILE (one \
            self-contained page, - for standard output).
            """)
    @OptionGroup var input: LogInputOptions
    @OptionGroup var filters: LogFilterOptions
    @Option(name: .long, help: "What each section is: device (the only grouping so far).") var by: String = "device"
    @Flag(name: .long, help: "JSON output (times in Unix seconds).") var json = false
    @Flag(name: .long, help: "CSV output: one row per interval, for spreadsheets.") var csv = false
    @Option(name: .long, help: "Write one HTML page to this file (- for standard output), as timeline --html does.") var html: String?
    @Option(name: .long, help: "The time zone of the times shown (Europe/Berlin, UTC; default: the system's).") var timezone: String?
    @Flag(name: .long, help: "Screens that showed their content least first (default: by name).") var worstFirst = false
    @Option(name: .long, help: "Seconds: shorter intervals are transitions (a launch, the owner settling: milliseconds), folded into the next one; 0 keeps all.")
    var transitions: Double = Double(DisplayReport.transitions) / 1e9

    func validate() throws {
        if [json, csv, html != nil].filter({ $0 }).count > 1 { throw ValidationError("give one of --json, --csv and --html") }
        if !(transitions >= 0 && transitions <= 60) { throw ValidationError("--transitions must be between 0 and 60 seconds") }
    }

    func run() async throws {
        guard by == "device" else {
            printError("castline logs report: --by \(by): reports are by device")
            throw CastlineExit.usage
        }
        let wanted = try filters.filter()
        let clock: LocalClock
        do { clock = try LocalClock(zone: timezone, environment: environment()) } catch {
            printError("castline logs report: --timezone: \(error)")
            throw CastlineExit.usage
        }
        // Every record is read: what a screen showed when the period begins comes from before
        // it, and records without a device (the processes) tell when castline ran.
        var report = LogReadReport()
        var timeline = DisplayTimeline()
        try input.read(filter: LogFilter(), report: &report) { entry in
            if let until = wanted.until, entry.time >= until { return false }
            timeline.add(entry)
            return true
        }
        var display = DisplayReport(timeline, since: wanted.since, until: wanted.until, clock: clock, worstFirst: worstFirst,
                                    transitions: Int64(transitions * 1e9))
        if let device = wanted.device {
            var only = LogFilter()
            only.device = device
            display = display.keeping { d in
                only.matches(LogEntry(time: 0, level: .info, className: "", body: "", attributes: ["device": .string(d.id), "deviceName": .string(d.name)]))
            }
        }
        if let html {
            try LogsTimelineCommand.writePage(display.html, to: html, command: "report", summary: report.summary)
            return
        }
        if csv {
            print(display.csv, terminator: "")
            return
        }
        printLine(json ? display.json.serialized() : display.text)
    }
}

struct LogsExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Which rule decides a class's level, and which layer set it.",
        discussion: """
            With a daemon running, asks it for the rules it runs with now (as `castline log-level --explain` does): \
            the config file's logging.rules, then CASTLINE_LOG, then run --log, then a runtime change (castline \
            log-level, the API); each replaces the ones before. Without one (or with --offline or --log), replays \
            the config's rules, CASTLINE_LOG and --log here. The last matching rule wins; without one, the minimum level.
            """)
    @Argument(help: "A class name (CastSession, CastChannel.com.google.cast.tp.heartbeat); not a file.")
    var className: String
    @Option(name: .long, help: "A function name, for function rules (@load*).")
    var function: String = ""
    @Option(name: .long, help: "Config file (default: $CASTLINE_CONFIG, ~/.config/castline/castline.yaml).")
    var config: String?
    @Option(name: .long, help: "Rules as given to a command's --log (replayed here, not asked of the daemon).")
    var log: String?
    @Option(name: .long, help: ArgumentHelp("The daemon's API socket (default: config api.socket, then the default places).", valueName: "path"))
    var apiSocket: String?
    @Flag(name: .long, help: "Replay the config and CASTLINE_LOG here even when a daemon runs.")
    var offline = false
    @Flag(name: .long, help: "JSON output.")
    var json = false

    func validate() throws {
        // A class name has no slash; a log or config file does (`logs explain castline.jsonl`).
        if let problem = Self.notAClass(className) { throw ValidationError(problem) }
    }

    /// Why `text` cannot be a class name (it names a file), or nil.
    static func notAClass(_ text: String) -> String? {
        let fileLike = text.contains("/") || [".jsonl", ".json", ".yaml", ".yml", ".log"].contains { text.hasSuffix($0) }
        guard fileLike || access(text, F_OK) == 0 else { return nil }
        return "\"\(text)\" is a file, not a class: explain takes a class name (e.g. CastSession); a config file goes with --config FILE, and a log file with `castline logs query|stats FILE`"
    }

    func run() async throws {
        if !offline, log == nil, let daemon = DaemonClient.find(direct: false, apiSocket: apiSocket, config: config) {
            var path = "/v1/logging/explain?class=" + DaemonClient.percentEncoded(className)
            if !function.isEmpty { path += "&function=" + DaemonClient.percentEncoded(function) }
            let answer = try daemon.send("GET", path, prefix: "castline logs explain")
            if json {
                guard case .object(var object) = answer else { printLine(answer.serialized()); return }
                object.set("from", "daemon")
                printLine(JSONValue.object(object).serialized())
            } else {
                printLine((answer["text"]?.string ?? answer.serialized()) + "\n  (the running daemon's rules, as it applies them now)")
            }
            return
        }
        let env = environment()
        let configuration = try CommandEnvironment.loadConfig(explicit: config, environment: env)
        var layers: [(source: String, rules: String)] = []
        if let rules = configuration.logging.rules { layers.append(("\(configuration.file) (logging.rules)", rules)) }
        if let rules = env[LogSystem.environmentVariable] { layers.append((LogSystem.environmentVariable, rules)) }
        if let log { layers.append(("--log", log)) }
        let explanation: LevelExplanation
        do {
            explanation = try LevelExplanation.explain(className: className, function: function, layers: layers, defaultMinimum: .warning)
        } catch {
            printError("castline logs explain: \(error)")
            throw CastlineExit.usage
        }
        if json {
            guard case .object(var object) = explanation.json else { return }
            object.set("from", "replay")
            printLine(JSONValue.object(object).serialized())
        } else {
            printLine(explanation.text + "\n  (" + (offline || log != nil ? "replayed here" : "no daemon answers: replayed here")
                      + " from the config file and the environment; a runtime change is only known to a running daemon)")
        }
    }
}

/// Counts records printed while following (the follower runs in its own task).
final class FollowCounter: @unchecked Sendable {
    private var count = 0
    private var lock = pthread_mutex_t()
    init() { pthread_mutex_init(&lock, nil) }
    func add() { pthread_mutex_lock(&lock); count += 1; pthread_mutex_unlock(&lock) }
    var value: Int { pthread_mutex_lock(&lock); defer { pthread_mutex_unlock(&lock) }; return count }
}
