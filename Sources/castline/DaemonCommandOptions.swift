import ArgumentParser

/// Options of the commands that only a running daemon answers (`jobs`, `channel`, `log-level`).
struct DaemonOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's API socket (default: config api.socket, then the default places).", valueName: "path"))
    var apiSocket: String?
    @Option(name: .long, help: ArgumentHelp("Config file (YAML), for api.socket. Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml.", valueName: "file"))
    var config: String?
    @Flag(name: .long, help: "Print JSON (one object per line).")
    var json = false

    /// The running daemon, or exit 1 saying none answers.
    func daemon(for command: String) throws -> DaemonClient {
        guard let daemon = DaemonClient.find(direct: false, apiSocket: apiSocket, config: config) else {
            printError("castline \(command): no castline daemon answers (start one with `castline run`; --api-socket names its socket)")
            throw CastlineExit.failure
        }
        return daemon
    }
}
