// castline-plugin-harness FILE [--script FILE] [--json]: `castline plugins test --in-process`
// as a program valgrind can run. castline's async main parks its main thread in libdispatch's
// sigsuspend, on a signal mask in read-only memory, which valgrind 3.19 (Debian 12) cannot
// handle (it dies with "the 'impossible' happened"); this program's main thread waits on a
// semaphore instead (the work runs detached from the main actor). It loads the plugin into its own process without the scanner (valgrind
// checks the plugin where it runs). `make plugin-memcheck PLUGIN=FILE` runs it under memcheck.
import CastCore
import CastPluginTesting
import Dispatch
import Foundation
import Synchronization

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: castline-plugin-harness FILE [--script FILE] [--call-timeout S] [--json]\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var file: String?
var scriptPath: String?
var json = false
var callTimeout = 5.0
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--script":
        guard !arguments.isEmpty else { usage() }
        scriptPath = arguments.removeFirst()
    case "--call-timeout":
        guard !arguments.isEmpty, let seconds = Double(arguments.removeFirst()), seconds > 0, seconds <= 60 else { usage() }
        callTimeout = seconds
    case "--json": json = true
    case "-h", "--help": usage()
    default: if file == nil, !argument.hasPrefix("-") { file = argument } else { usage() }
    }
}
guard let file else { usage() }
var script: HarnessScript?
if let scriptPath {
    guard let text = try? String(contentsOfFile: scriptPath, encoding: .utf8) else {
        FileHandle.standardError.write(Data("castline-plugin-harness: \(scriptPath): cannot be read\n".utf8))
        exit(2)
    }
    do { script = try HarnessScript.parse(text) } catch {
        FileHandle.standardError.write(Data("castline-plugin-harness: \(scriptPath): \(error)\n".utf8))
        exit(2)
    }
}
var options = PluginHarness.Options(file: file, inProcess: true)
options.callTimeout = callTimeout
options.scan = false
let harness = PluginHarness(options: options)
let outcome = Mutex<HarnessReport?>(nil)
let done = DispatchSemaphore(value: 0)
Task.detached { [script] in
    let report = await harness.run(script: script)
    outcome.withLock { $0 = report }
    done.signal()
}
done.wait()
let report = outcome.withLock { $0 }!
print(json ? report.json.serialized() : report.lines.joined(separator: "\n"))
exit(report.passed ? 0 : 1)
