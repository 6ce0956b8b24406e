import ArgumentParser

/// Options shared by every command that talks to devices.
struct DeviceOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The device: a name, alias, glob (\"Lobby*\"), device id, or host[:port].", valueName: "device"))
    var device: String?

    @Option(name: .long, help: ArgumentHelp("Config file (YAML). Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: "A device address to use besides mDNS (host or host:port). Repeatable.")
    var host: [String] = []

    @Option(name: .long, help: "Seconds to wait for the device to be discovered (default: config discovery.timeout, 5).")
    var timeout: Double?

    @Option(name: .long, help: "A folder or .so file to load plugins from (before CASTLINE_PLUGIN_PATH). Repeatable.")
    var pluginPath: [String] = []

    @Option(name: .long, help: "Log rules, e.g. \"*:info,CastSession:debug\" (overrides the config and CASTLINE_LOG).")
    var log: String?

    /// The values as a plain struct (parsable types cannot be built by hand).
    var request: DeviceRequest {
        DeviceRequest(device: device, config: config, host: host, timeout: timeout, pluginPath: pluginPath, log: log)
    }

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 3600) { throw ValidationError("--timeout must be a number of seconds above 0 and at most 3600") }
        if let device, device.isEmpty { throw ValidationError("--device must not be empty") }
    }
}

/// What a command asks of ``CommandEnvironment``: the `--device`, `--config`, … values.
struct DeviceRequest: Sendable {
    var device: String?
    var config: String?
    var host: [String] = []
    var timeout: Double?
    var pluginPath: [String] = []
    var log: String?
}
