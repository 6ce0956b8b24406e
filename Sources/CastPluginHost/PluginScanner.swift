import CastCore
import CastLogging
#if canImport(Glibc)
import Glibc
#endif

/// Describes and initialises plugin files in a helper child process first, as GStreamer's
/// `gst-plugin-scanner` does: a plugin that crashes or hangs while it is described or while its
/// `init` runs takes the child down, not the caller. The caller gets a ``PluginLoadError`` naming
/// the file and the signal (`crashed`) or the bound (`timed_out`) and leaves the plugin out;
/// only a plugin that came through is then loaded for real.
///
/// The child is `castline plugin-scan FILE` (``PluginScanChild``), one per file, all started at
/// once; the conversation is ``FramedSocket`` frames on its fd 3:
/// child `{"described": {…}}` or `{"refused": {…}}`; caller `{"init": "<config JSON>"}` (or
/// nothing: the socket closes); child `{"initialised": true}` or `{"initFailed": {"status", "reason"}}`.
public struct PluginScanner: Sendable {
    /// The castline executable that has the hidden `plugin-scan` command.
    package var executable: String
    /// The bound of each step in the child: `init` gets this long, and describing (process start,
    /// `dlopen`, the entry symbol) this long plus ``startAllowance``.
    package var timeout: Double
    /// Extra time for the child process to start before it describes the plugin.
    package var startAllowance: Double = 2

    public init(executable: String, timeout: Double) {
        self.executable = executable
        self.timeout = timeout
    }

    /// The running castline (`/proc/self/exe`) as the scanner.
    package static func castline(timeout: Double) -> PluginScanner? {
        PluginSearchPath.executablePath().map { PluginScanner(executable: $0, timeout: timeout) }
    }

    func start(_ path: String) -> PluginScan { PluginScan(scanner: self, path: path) }
}

/// One file's scan: a child process and the two steps asked of it.
final class PluginScan {
    let path: String
    private let scanner: PluginScanner
    private let child: Result<ChildProcess, ChildProcess.SpawnError>
    private let started = MonotonicDeadline(after: 0)

    init(scanner: PluginScanner, path: String) {
        self.scanner = scanner
        self.path = path
        do { child = .success(try ChildProcess.spawn(scanner.executable, ["plugin-scan", path])) } catch {
            child = .failure(error)
        }
    }

    /// What the child read from the file: the plugin as described (no vtables: ``PluginVTable/described``),
    /// or why it was refused, crashed or timed out.
    func describe() -> Result<LoadedPlugin, PluginLoadError> {
        let child: ChildProcess
        switch self.child {
        case .success(let c): child = c
        case .failure(let error):
            return .failure(PluginLoadError(.openFailed, path: path, "cannot be scanned: \(error)"))
        }
        let deadline = MonotonicDeadline(after: scanner.timeout + scanner.startAllowance)
        switch child.socket.receive(deadline: deadline) {
        case .success(let frame):
            if let described = frame["described"], let plugin = LoadedPlugin.described(from: described, path: path) {
                return .success(plugin)
            }
            if let refused = frame["refused"], let error = PluginLoadError(json: refused, path: path) {
                finish()
                return .failure(error)
            }
            finish()
            return .failure(PluginLoadError(.openFailed, path: path, "the scanner answered something unexpected: \(frame.serialized().prefix(200))"))
        case .failure(let error):
            return .failure(ended(error, step: .describe, pluginID: nil, bound: scanner.timeout + scanner.startAllowance))
        }
    }

    /// Runs the plugin's `init` in the child with `config`; nil when it returned 0.
    func initialise(pluginID: String, config: String) -> PluginLoadError? {
        guard case .success(let child) = self.child else { return nil }
        guard child.socket.send(["init": .string(config)], deadline: MonotonicDeadline(after: scanner.timeout)) else {
            return ended(.closed, step: .initialise, pluginID: pluginID, bound: scanner.timeout)
        }
        switch child.socket.receive(deadline: MonotonicDeadline(after: scanner.timeout)) {
        case .success(let frame):
            finish()
            if frame["initialised"] == true { return nil }
            let failed = frame["initFailed"]
            return PluginLoadError(.initFailed, path: path, pluginID: pluginID,
                                   "disabled: init failed (status \(failed?["status"]?.int ?? -1)): \(failed?["reason"]?.string ?? "no reason given")")
        case .failure(let error):
            return ended(error, step: .initialise, pluginID: pluginID, bound: scanner.timeout)
        }
    }

    /// Ends the child (it exits by itself once its socket closes) and reaps it, bounded.
    func finish() {
        guard case .success(let child) = child else { return }
        child.socket.close()
        child.reap(within: 1)
    }

    enum Step {
        case describe, initialise
    }

    /// The error for a child that closed its socket (crashed or exited) or did not answer in time
    /// (killed by PID, then reaped).
    private func ended(_ error: FramedSocket.ReceiveError, step: Step, pluginID: String?, bound: Double) -> PluginLoadError {
        guard case .success(let child) = child else { return PluginLoadError(.openFailed, path: path, pluginID: pluginID, "cannot be scanned") }
        let during = step == .describe ? "while it was described" : "in its init"
        switch error {
        case .timedOut:
            child.kill()
            child.reap(within: 1)
            let what = step == .describe ? "it was not described" : "its init did not return"
            return PluginLoadError(.timedOut, path: path, pluginID: pluginID,
                "left out: \(what) within \(Self.seconds(bound)) (plugins.call_timeout; the scanner, castline plugin-scan, was killed)")
        case .closed, .malformed:
            switch child.reap(within: 1) {
            case .signalled(let signal):
                return PluginLoadError(.crashed, path: path, pluginID: pluginID,
                    "left out: crashed with signal \(signal) (\(ChildProcess.signalName(signal))) \(during) (in the scanner, castline plugin-scan)")
            case .exited(let code):
                return PluginLoadError(.crashed, path: path, pluginID: pluginID,
                    "left out: the scanner (castline plugin-scan) exited with status \(code) \(during)")
            }
        }
    }

    /// `5 s`, `0.25 s`: to the millisecond (a measured time is never printed with 15 digits).
    static func seconds(_ value: Double) -> String {
        "\(((value * 1000).rounded() / 1000).formatted) s"
    }
}

/// `castline plugin-scan FILE`: the child side of ``PluginScanner``. Loads the file (no safety
/// check: the caller made it), reports the description, runs `init` when asked and reports how it
/// went. The plugin's own log records go nowhere: the caller runs `init` again for real.
package enum PluginScanChild {
    /// The conversation on fd 3; returns the exit status (call `_exit` with it: the plugin's
    /// threads and destructors are no concern of the scanner's).
    package static func run(path: String) -> Int32 {
        let socket = FramedSocket(fd: 3)
        let plugin: LoadedPlugin
        switch PluginLoader.load(path, checkSafety: false) {
        case .failure(let error):
            socket.send(["refused": error.json])
            return 0
        case .success(let loaded):
            plugin = loaded
        }
        guard socket.send(["described": plugin.descriptionJSON]) else { return 1 }
        guard case .success(let command) = socket.receive(), let config = command["init"]?.string else { return 0 }
        guard let initialize = plugin.entry.initialize else {
            socket.send(["initialised": true])
            return 0
        }
        let context = PluginHostContext.register(pluginID: plugin.id, featureID: nil, role: .plugin,
                                                 logSystem: LogSystem(filter: LoggerFilter(minimumLevel: .none)))
        let errorText = PluginErrorText()
        let rc = config.withCString { initialize(HostServices.table, context.pointer, $0, errorText.buffer) }
        if rc == 0 {
            socket.send(["initialised": true])
        } else {
            socket.send(["initFailed": ["status": .int(Int64(rc)), "reason": errorText.text.map { .string($0) } ?? .null]])
        }
        return 0
    }
}
