import ArgumentParser
import CastCore
import CastLogging
import CastReceiverSim
import CastReceiverSimServer
import Glibc

/// `castline sim`: run Cast receiver simulators until SIGINT/SIGTERM.
struct SimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim",
        abstract: "Run simulated Cast devices (TLS 8009, eureka_info 8008/8443, mDNS via avahi).",
        discussion: """
            Prints one JSON line {"event":"ready",…} on stdout when every device listens, then runs \
            until SIGINT or SIGTERM. Run-time control (list sessions, push messages, faults) goes \
            through --control-socket: one JSON command per line, e.g. {"command":"list"} or \
            {"command":"reboot","device":0,"downFor":3}.
            """
    )

    @Option(name: .long, help: "Number of simulated devices.")
    var devices: Int = 1

    @Option(name: .long, help: "Device layout: addresses (127.0.0.1, .2, … each on 8009/8008/8443) or ports (one address, 3 ports per device).")
    var layout: DeviceFleet.Layout = .addresses

    @Option(name: .long, help: "First device's IPv4 address (loopback).")
    var address: String = "127.0.0.1"

    @Option(name: .long, help: "CASTV2 port (addresses layout) or first port (ports layout, default 20000).")
    var port: Int?

    @Option(name: .long, help: "Friendly name (numbered when --devices > 1).")
    var name: String = "castline sim"

    @Option(name: .long, help: "Model name announced in mDNS and eureka_info.")
    var model: String = "Chromecast"

    @Option(name: .long, help: "Seed for the device uuids and the field profiles' chances (launch outcomes, the daily reboot's moment); stable across runs.")
    var seed: UInt64 = 0

    @Option(name: .long, help: "TLS profile of devices that name none in --config: chromecast-legacy (TLS 1.2, RSA-2048, no session tickets) or modern (TLS 1.3, EC P-256, tickets). Default: by model (chromecast-legacy except Chromecast with Google TV and Google TV Streamer).")
    var tls: DeviceTLSProfile?

    @Option(name: .long, help: "Simulator config file (JSON): devices, apps with namespaces, media rules.")
    var config: String?

    @Flag(name: .long, help: "Do not advertise over mDNS (avahi-daemon).")
    var noMdns = false

    @Option(name: .long, help: "Serve one device as a `castline capture` FILE recorded it: its identity, TXT, eureka_info, and its answers to the requests recorded (the others: the standard model).")
    var replay: String?

    @Option(name: .long, help: "Append every frame in and out as JSON lines to this file.")
    var frameLog: String?

    @Option(name: .long, help: "Unix socket for run-time control commands (JSON lines).")
    var controlSocket: String?

    @Option(name: .long, help: "Folder for the simulator root CA (created if missing); default: a fresh CA per run.")
    var authorityDir: String?

    @Option(name: .long, help: "Write the simulator root CA certificate (PEM) here: the trust anchor for device auth.")
    var exportRootCa: String?

    @Option(name: .long, help: "Seconds of sender silence before the device PINGs it.")
    var pingInterval: Double = 5

    @Option(name: .long, help: "Seconds of sender silence before the device drops the connection.")
    var heartbeatTimeout: Double = 15

    @Option(name: .long, help: "Seconds from BUFFERING to PLAYING after a LOAD.")
    var bufferingDelay: Double = 0.2

    @Option(name: .long, help: "Seconds from a LAUNCH to the app running and its reply, as a real device takes about a second to load an app; 0 answers at once (an instant reply makes pychromecast and catt race themselves: docs/simulator.md).")
    var launchDelay: Double = 1

    @Option(name: .long, help: "Stop an app that shows no media this many seconds after its last use, as Nest Hubs stop dashboards (default: never).")
    var appIdleTimeout: Double?

    @Option(name: .long, help: "What resets an app's idle timer on every device: media (only media activity: a LOAD, media shown) or any-message (any message to the app); default: each device's field profile.")
    var idleResetBy: String?

    @Option(name: .long, help: "Field profile of the devices whose config names none: ideal (a well-behaved device), model (each device its model's), or a profile name (chromecast, nest-hub, nest-hub-fuchsia, chromecast-google-tv, cast-tv, speaker). See docs/simulator.md.")
    var profile: String = "ideal"

    @Option(name: .long, help: "Divide every field profile's durations by this (60: a day in 24 minutes).")
    var fieldTimeScale: Double = 1

    @Option(name: .long, help: "Seconds a device waits for loopback media after a LOAD before the LOAD fails.")
    var mediaFetchTimeout: Double = 5

    @Flag(name: .long, help: "Do not fetch loopback media after a LOAD: every LOAD plays, reachable or not.")
    var noMediaCheck = false

    @Flag(name: .long, help: "Fault: never answer PING.")
    var ignorePings = false

    @Option(name: .long, help: "Fault: send every reply this many seconds late.")
    var replyDelay: Double = 0

    @Option(name: .long, help: "Fault: close each connection this many seconds after it opens.")
    var dropAfter: Double?

    @Option(name: .long, help: "Fault: the first LOAD fails with this detailedErrorCode (e.g. 104).")
    var failNextLoad: Int?

    @Option(name: .long, help: "Event-loop threads (default: one per core, at most 4).")
    var threads: Int?

    @Option(name: .long, help: "Log rules, e.g. \"*:info,CastChannel.*:debug\" (overrides CASTLINE_LOG).")
    var log: String?

    /// Durations must be finite, non-negative numbers of seconds (at most a day, which no test
    /// or demo needs more of); counts must be positive.
    func validate() throws {
        func seconds(_ value: Double?, _ flag: String, positive: Bool = false) throws {
            guard let value else { return }
            guard value.isFinite, positive ? value > 0 : value >= 0, value <= 86_400 else {
                throw ValidationError("\(flag) must be a number of seconds, \(positive ? "above 0" : "0 or more") and at most 86400 (got \(value))")
            }
        }
        try seconds(pingInterval, "--ping-interval", positive: true)
        try seconds(heartbeatTimeout, "--heartbeat-timeout", positive: true)
        try seconds(bufferingDelay, "--buffering-delay")
        try seconds(launchDelay, "--launch-delay")
        try seconds(appIdleTimeout, "--app-idle-timeout", positive: true)
        try seconds(replyDelay, "--reply-delay")
        try seconds(mediaFetchTimeout, "--media-fetch-timeout", positive: true)
        try seconds(dropAfter, "--drop-after")
        if let idleResetBy, FieldProfile.IdleReset(rawValue: idleResetBy) == nil {
            throw ValidationError("--idle-reset-by must be media or any-message (got \(idleResetBy))")
        }
        guard FieldProfileChoice(name: profile) != nil else {
            throw ValidationError("--profile must be ideal, model or one of " + FieldProfile.builtIn.map(\.name).joined(separator: ", ")
                                  + " (got \(profile))")
        }
        guard fieldTimeScale.isFinite, fieldTimeScale >= 1, fieldTimeScale <= 10_000 else {
            throw ValidationError("--field-time-scale must be 1…10000 (got \(fieldTimeScale))")
        }
        guard heartbeatTimeout > pingInterval else {
            throw ValidationError("--heartbeat-timeout (\(heartbeatTimeout)) must be longer than --ping-interval (\(pingInterval))")
        }
        guard devices >= 1 else { throw ValidationError("--devices must be 1 or more (got \(devices))") }
        if let threads, threads < 1 { throw ValidationError("--threads must be 1 or more (got \(threads))") }
    }

    func run() async throws {
        let logSystem = LogSystem.shared
        logSystem.addSink(ConsoleLogSink())
        if let error = logSystem.applyEnvironment(environment()) {
            throw ValidationError("CASTLINE_LOG: \(error)")
        }
        if let log {
            do { try logSystem.applyRules(log, source: "--log") } catch { throw ValidationError("--log: \(error)") }
        }
        defer { _ = logSystem.shutdown() }
        DescriptorLimit.raise(log: Logger(class: "SimCommand", system: logSystem))

        var settings = SimulatorSettings()
        var fleet: [SimulatedDeviceConfiguration]
        var groups: [SimulatedGroupConfiguration] = []
        do {
            fleet = try DeviceFleet.make(count: devices, layout: layout, baseAddress: address, basePort: port,
                                         namePrefix: name, model: model, seed: seed)
            if let config {
                let file = try SimulatorConfigFile.load(path: config)
                settings.apps = file.apps
                settings.mediaRules = file.mediaRules
                groups = file.groups
                if !file.devices.isEmpty { fleet = file.devices }
            }
        } catch {
            throw ValidationError("\(error)")
        }
        if let replay {
            do {
                let script = try Self.loadReplay(path: replay)
                settings.replay = script
                fleet = [Self.replayDevice(script.identity, like: fleet[0])]
            } catch {
                throw ValidationError("--replay \(replay): \(error)")
            }
        }
        settings.advertise = !noMdns
        settings.frameLogPath = frameLog
        settings.controlSocketPath = controlSocket
        settings.authorityDirectory = authorityDir
        settings.pingInterval = pingInterval
        settings.heartbeatTimeout = heartbeatTimeout
        settings.timing.bufferingDelay = bufferingDelay
        settings.timing.launchDelay = launchDelay
        settings.timing.appIdleTimeout = appIdleTimeout
        settings.timing.idleResetBy = idleResetBy.flatMap { FieldProfile.IdleReset(rawValue: $0) }
        settings.fieldProfile = FieldProfileChoice(name: profile) ?? .ideal
        settings.fieldTimeScale = fieldTimeScale
        settings.fieldSeed = seed
        settings.timing.checksLoopbackMedia = !noMediaCheck
        settings.mediaFetchTimeout = mediaFetchTimeout
        settings.initialFaults = DeviceFaults(ignorePings: ignorePings, replyDelay: replyDelay, dropAfter: dropAfter)
        settings.threads = threads
        settings.tlsProfile = tls
        SignalWaiter.block([SIGINT, SIGTERM])

        let simulator: ReceiverSimulator
        do {
            simulator = try await ReceiverSimulator.start(devices: fleet, groups: groups, settings: settings, logSystem: logSystem)
        } catch {
            printError("castline sim: \(error)")
            throw ExitCode(1)
        }
        if let failNextLoad {
            _ = try await simulator.control.execute(["command": "fail-next-load", "code": .int(Int64(failNextLoad))]).get()
        }
        if let exportRootCa {
            do { try writeFile(exportRootCa, simulator.authority.rootCertificatePEM) } catch {
                printError("castline sim: cannot write \(exportRootCa): \(error)")
                await simulator.stop()
                throw ExitCode(1)
            }
        }
        printReady(simulator)
        let signal = await SignalWaiter.wait([SIGINT, SIGTERM])
        Logger(class: "SimCommand", system: logSystem).info("signal \(signal): stopping")
        await simulator.stop()
    }

    private func printReady(_ simulator: ReceiverSimulator) {
        let devices: [JSONValue] = simulator.devices.map { device in
            let c = device.configuration
            return ["name": .string(c.name), "uuid": .string(c.uuid), "address": .string(c.address),
                    "castPort": .int(Int64(c.castPort)), "httpPort": .int(Int64(c.httpPort)),
                    "httpsPort": .int(Int64(c.httpsPort)), "tls": .string(c.effectiveTLSProfile().rawValue)]
        }
        var ready: JSONObject = ["event": "ready", "pid": .int(Int64(getpid())), "devices": .array(devices)]
        ready.set("groups", .array(simulator.groups.readyEntries()))
        if let controlSocket { ready.set("controlSocket", .string(controlSocket)) }
        // "running", "waiting for avahi-daemon", "unavailable: …" or "off" (--no-mdns).
        ready.set("mdns", .string(simulator.advertiser?.stateDescription ?? "off"))
        printLine(JSONValue.object(ready).serialized())
    }
}

extension SimCommand {
    static func loadReplay(path: String) throws -> ReplayScript {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SimulatorError.io("cannot read: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= 64 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        guard bytes.count <= 64 << 20 else { throw SimulatorError.io("larger than 64 MiB") }
        return try ReplayScript(captureText: String(decoding: bytes, as: UTF8.self))
    }

    /// `base` (address and ports from the command line) with the recorded device's name, id and
    /// model; a video device unless the recorded `ca` bits say otherwise.
    static func replayDevice(_ identity: ReplayScript.Identity, like base: SimulatedDeviceConfiguration) -> SimulatedDeviceConfiguration {
        var device = base
        if !identity.name.isEmpty { device.name = identity.name }
        let id = identity.id.lowercased()
        if id.count == 32, id.allSatisfy(\.isHexDigit) { device.uuid = id }
        if !identity.model.isEmpty { device.model = identity.model }
        if let bits = identity.txt["ca"].flatMap({ Int($0) }) { device.isVideoDevice = bits & 1 == 1 }
        return device
    }
}

extension DeviceFleet.Layout: ExpressibleByArgument {}
extension DeviceTLSProfile: ExpressibleByArgument {}

func environment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let text = String(cString: entry)
        if let eq = text.firstIndex(of: "=") { result[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
        pointer += 1
    }
    return result
}

/// One line on stdout, every control character in it escaped (``TerminalText``): what castline
/// prints holds text from devices, brokers and logs, which must not drive the terminal.
func printLine(_ text: String) {
    let line = Array((TerminalText.safeLines(text) + "\n").utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// One line on stderr, escaped like ``printLine(_:)``.
func printError(_ text: String) {
    let line = Array((TerminalText.safeLines(text) + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw SimulatorError.io(String(cString: strerror(errno))) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw SimulatorError.io(String(cString: strerror(errno))) }
}
