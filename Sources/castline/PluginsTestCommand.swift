import ArgumentParser
import CastCore
import CastPluginTesting
import Glibc

/// `castline plugins test FILE`: a channel plugin tested alone, the way castline would run it.
struct PluginsTestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Test a channel plugin file: load it, open its channels on a simulated device and run a script of steps.",
        discussion: """
            The plugin goes through castline's own loader (the scanner, the ABI checks, isolation as castline \
            would choose it: a file named here runs in a helper process unless --in-process). A simulated \
            device on 127.0.0.1 runs an app ("castline plugin harness", CA57E575) that declares the plugin's \
            namespaces; a real session joins it and each channel feature is opened on it. Without --script each \
            channel gets the smoke test: a command answered (either way), the app stopped, relaunched and the \
            link dropped (the plugin must be told of each: ABI 1.2 on_app_event), a command answered again, \
            and no crash, hang or overrun. A script (JSON) says how the app answers on each namespace and lists \
            steps: command (with the reply or error expected), app_sends, expect_sent, expect_record, app \
            (stop | relaunch | drop). Format and examples: Plugins/README.md, "Testing a plugin". Output: TAP, \
            or --json. Under valgrind: make plugin-memcheck PLUGIN=FILE.
            Exits 0 when every step passed, 1 when one failed, 2 on a bad script.
            """)

    @Argument(help: ArgumentHelp("The plugin file (.so).", valueName: "file"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("A script of steps (JSON).", valueName: "file"))
    var script: String?

    @Flag(name: .long, help: "Load the plugin into this process (what valgrind needs), not a helper process.")
    var inProcess = false

    @Option(name: .long, help: ArgumentHelp("Bound on each call into the plugin, seconds (plugins.call_timeout).", valueName: "seconds"))
    var callTimeout: Double = 5

    @Flag(
        name: .long,
        help: "JSON output: {\"file\", \"plugin\", \"abi_minor\", \"passed\", \"results\": [{\"feature\", \"step\", \"passed\", \"detail\"}]}.")
    var json = false

    func validate() throws {
        guard callTimeout > 0, callTimeout <= 60 else { throw ValidationError("--call-timeout: seconds in (0, 60]") }
        guard access(file, R_OK) == 0 else { throw ValidationError("\(file): cannot be read") }
    }

    func run() async throws {
        var parsed: HarnessScript?
        if let script {
            guard let text = try? String(contentsOfFile: script, encoding: .utf8) else {
                printError("castline: \(script): cannot be read")
                throw ExitCode(2)
            }
            do { parsed = try HarnessScript.parse(text) } catch {
                printError("castline: \(script): \(error)")
                throw ExitCode(2)
            }
        }
        var options = PluginHarness.Options(file: file, inProcess: inProcess ? true : nil)
        options.callTimeout = callTimeout
        let report = await PluginHarness(options: options).run(script: parsed)
        if json {
            printLine(report.json.serialized())
        } else {
            for line in report.lines { printLine(line) }
        }
        if !report.passed { throw ExitCode(1) }
    }
}
