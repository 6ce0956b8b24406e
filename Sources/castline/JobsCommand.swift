import ArgumentParser
import CastCore
import CastlineDaemon

/// `castline jobs list|show|add|rm`: the running daemon's jobs (desired state, kept across restarts).
struct JobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs", abstract: "List, show, add, remove and run the running daemon's jobs.",
        discussion: "Jobs added here are kept in the daemon's jobs file (daemon.jobs_file) and survive restarts; jobs of the config file are changed there.\n"
            + CastlineExit.summary,
        subcommands: [List.self, Show.self, Add.self, Remove.self, Run.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every job with its state on each device.")
        @OptionGroup var options: DaemonOptions

        func run() throws {
            let answer = try options.daemon(for: "jobs").send("GET", "/v1/jobs")
            for job in answer["jobs"]?.array ?? [] {
                if options.json { printLine(job.serialized()); continue }
                let devices = (job["devices"]?.array ?? []).map { "\($0["device"]?.string ?? "?"): \($0["state"]?.string ?? "?")" }
                let definition = job["definition"]
                let what = definition?["site"]?["url"]?.string ?? definition?["media"]?["url"]?.string
                    ?? definition?["media"]?["items"].map { "\($0.array?.count ?? 0) items" } ?? ""
                if let state = job["announcement"] {
                    let media = definition?["announce"]?["media"]?.string ?? ""
                    let next = state["next"]?.string.map { "next at \($0)" } ?? "when run"
                    printLine("\(job["name"]?.string ?? "?") (\(job["source"]?.string ?? "?")) announce \(media) [\(next)]"
                              + (devices.isEmpty ? "  no device yet" : "  " + (job["devices"]?.array ?? []).map { $0["device"]?.string ?? "?" }.joined(separator: ", ")))
                    continue
                }
                var schedule = ""
                if let state = job["schedule"] {
                    let entry = state["in_force"]?.string ?? state["entry"]?.int.map { "entry \($0)" } ?? "no entry"
                    schedule = " [schedule: \(entry) in force" + (state["next_switch"]?.string.map { ", next switch \($0)" } ?? "") + "]"
                }
                printLine("\(job["name"]?.string ?? "?") (\(job["source"]?.string ?? "?")) \(what)\(schedule)"
                          + (devices.isEmpty ? "  no device yet" : "  " + devices.joined(separator: ", ")))
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "One job, as JSON.")
        @OptionGroup var options: DaemonOptions
        @Argument(help: "The job's name.") var name: String

        func run() throws {
            printLine(try options.daemon(for: "jobs").send("GET", "/v1/jobs/" + DaemonClient.percentEncoded(name)).serialized())
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add (or replace) a job: --device globs and --media, or --file with a job as in the config.")
        @OptionGroup var options: DaemonOptions
        @Argument(help: "The job's name (letters, digits, '-', '_', '.').") var name: String
        @Option(name: .customLong("device"), help: "A device glob (name, alias or id). Repeatable.") var devices: [String] = []
        @Option(name: .long, help: "An http(s) URL or an absolute file path.") var media: String?
        @Option(name: .long, help: "Title shown on the receiver.") var title: String?
        @Option(name: .long, help: "Content type, e.g. video/mp4.") var contentType: String?
        @Option(name: .long, help: "buffered, live or none.") var streamType: String?
        @Option(name: .long, help: "Receiver app id.") var app: String?
        @Option(name: .long, help: "yield (default) or reclaim.") var takeover: String?
        @Option(name: .long, help: "With takeover yield: reclaim after this many seconds.") var reclaimAfter: Double?
        @Option(name: .long, help: "A job definition (YAML or JSON, the config's job keys) instead of the options.") var file: String?

        func validate() throws {
            if file == nil && (devices.isEmpty || media == nil) { throw ValidationError("give --device and --media, or --file") }
        }

        func run() throws {
            let daemon = try options.daemon(for: "jobs")
            if let file {
                guard let bytes = try? SmallFile.read(path: file, limit: 1 << 20), let text = String(validating: bytes, as: UTF8.self) else {
                    printError("castline jobs add: cannot read \(file)")
                    throw CastlineExit.usage
                }
                // YAML or JSON: the daemon checks it as a config job and answers with positions.
                try put(daemon, raw: text)
                return
            }
            var media = JSONObject()
            media.set("url", .string(self.media ?? ""))
            if let title { media.set("title", .string(title)) }
            if let contentType { media.set("content_type", .string(contentType)) }
            if let streamType { media.set("stream_type", .string(streamType)) }
            var job = JSONObject()
            job.set("devices", .array(devices.map { .string($0) }))
            job.set("media", .object(media))
            if let app { job.set("app_id", .string(app)) }
            if let takeover { job.set("takeover", .string(takeover)) }
            if let reclaimAfter { job.set("reclaim_after", .double(reclaimAfter)) }
            try put(daemon, raw: JSONValue.object(job).serialized())
        }

        func put(_ daemon: DaemonClient, raw: String) throws {
            let answer = try daemon.sendRaw("PUT", "/v1/jobs/" + DaemonClient.percentEncoded(name), text: raw)
            if options.json { printLine(answer.serialized()) } else {
                printLine("job \(name) \(answer["created"] == true ? "added" : "replaced")")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove a job (its cast stops unless daemon.on_job_removed is leave).")
        @OptionGroup var options: DaemonOptions
        @Argument(help: "The job's name.") var name: String

        func run() throws {
            try options.daemon(for: "jobs").send("DELETE", "/v1/jobs/" + DaemonClient.percentEncoded(name))
            if !options.json { printLine("job \(name) removed") }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run", abstract: "Play an announce job's announcement now on its devices; each is restored afterwards.",
            discussion: "Prints one line per device, as castline announce does; exit 5 when a device could not be announced to "
                + "or restored, 1 when none could.\n"
                + CastlineExit.summary)
        @OptionGroup var options: DaemonOptions
        @Argument(help: "The announce job's name.") var name: String
        @Flag(inversion: .prefixedNo, help: "Wait until each device is restored; --no-wait returns once the announcement is under way.")
        var wait = true

        func run() async throws {
            let answer = try options.daemon(for: "jobs").send("POST", "/v1/jobs/" + DaemonClient.percentEncoded(name) + "/run",
                                                              body: ["wait": .bool(wait)])
            if options.json { printLine(answer.serialized()) }
            guard wait else {
                if !options.json { printLine("job \(name): announcing on \(answer["devices"]?.int ?? 0) device(s)") }
                return
            }
            // Exit 5 when any device was not announced to or not restored (unreachable, refused,
            // restored partly); 1 only when the announcement reached no device at all.
            let devices = answer["devices"]?.array ?? []
            var failed = 0, notRestored = 0
            for device in devices {
                if let error = device["error"]?.string {
                    if !options.json { printError("castline: \(device["device"]?.string ?? "?"): \(error)") }
                    failed += 1
                } else {
                    if !options.json { CommandOutput.print(device, json: false) }
                    if device["restored"] != .bool(true) { notRestored += 1 }
                }
            }
            if !devices.isEmpty, failed == devices.count { throw ExitCode(1) }
            if failed + notRestored > 0 { throw ExitCode(CastlineExit.notRestored.rawValue) }
        }
    }
}
