import ArgumentParser
import CastCore
import CastlineDaemon

/// `castline log-level [RULES]`: the running daemon's log rules, read or changed at run time.
struct LogLevelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Show or change the running daemon's log rules.",
        discussion: """
            With no RULES: the rules in force and the layers they come from (config logging.rules, CASTLINE_LOG, \
            --log, then the rules set here). RULES (the CASTLINE_LOG grammar, e.g. "info,CastSession:debug") replace \
            this command's layer until --reset or a restart; a reload keeps it. --explain CLASS says which rule \
            decides that class's level.
            """ + "\n" + CastlineExit.summary)

    @OptionGroup var options: DaemonOptions
    @Argument(help: "Rules, e.g. \"info,CastSession:debug\".") var rules: String?
    @Flag(name: .long, help: "Remove the rules set with this command.") var reset = false
    @Option(name: .long, help: "Explain the level of this class.") var explain: String?
    @Option(name: .long, help: "With --explain: the function.") var function: String?

    func validate() throws {
        if reset && rules != nil { throw ValidationError("give RULES or --reset, not both") }
    }

    func run() throws {
        let daemon = try options.daemon(for: "log-level")
        if let explain {
            var path = "/v1/logging/explain?class=" + DaemonClient.percentEncoded(explain)
            if let function { path += "&function=" + DaemonClient.percentEncoded(function) }
            let answer = try daemon.send("GET", path)
            printLine(options.json ? answer.serialized() : (answer["text"]?.string ?? answer.serialized()))
            return
        }
        let answer: JSONValue
        if let rules {
            answer = try daemon.send("PUT", "/v1/logging", body: ["rules": .string(rules)])
        } else if reset {
            answer = try daemon.send("PUT", "/v1/logging", body: ["rules": .null])
        } else {
            answer = try daemon.send("GET", "/v1/logging")
        }
        if options.json { printLine(answer.serialized()); return }
        printLine("rules in force: \(answer["rules"]?.string ?? "")")
        for layer in answer["layers"]?.array ?? [] {
            printLine("  \(layer["source"]?.string ?? "?"): \(layer["rules"]?.string ?? "")")
        }
    }
}
