import ArgumentParser
import CastCore
import CastProtocol
import CastlineConfig
import Glibc

/// `castline fleet status`: every agent and device a broker knows, online or not.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Watch a fleet of castline agents through their MQTT broker.",
        subcommands: [FleetStatusCommand.self])
}

struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "List every agent and device on the broker, online or not.",
        discussion: """
            Subscribes to <base_topic>/+/status and <base_topic>/+/device/+/state (retained, published by each \
            agent's MQTT bridge) and prints what arrived within --wait seconds: each agent with its status \
            (online, offline after its last will, unknown) and its devices' last state. \
            --follow: print again on every change (one JSON object per change with --json) until SIGINT or --for.
            Broker: --broker, else the config's mqtt.url, else mqtt://127.0.0.1:1883. Plain mqtt:// only.
            JSON: {"agents": [{"agent", "status", "online", "devices": [{"id", "device", "state", "title", "link", "current"}]}]}.
            """ + "\n" + CastlineExit.summary)

    @Option(name: .long, help: ArgumentHelp("The broker, mqtt://host[:port].", valueName: "url"))
    var broker: String?
    @Option(name: .long, help: "The agents' base topic (default: the config's mqtt.base_topic, else castline).")
    var baseTopic: String?
    @Option(name: .long, help: "Broker user name (default: the config's mqtt.username).")
    var username: String?
    @Option(name: .long, help: ArgumentHelp("A file whose first line is the password (default: the config's mqtt.password_file).", valueName: "file"))
    var passwordFile: String?
    @Option(name: .long, help: ArgumentHelp("The config file (for its mqtt: section).", valueName: "file"))
    var config: String?
    @Option(name: .long, help: "Seconds to collect the retained messages before printing.")
    var wait: Double = 2
    @Flag(name: .long, help: "Print as JSON.")
    var json = false
    @Flag(name: .long, help: "Keep watching and print on every change.")
    var follow = false
    @Option(name: .customLong("for"), help: "With --follow: stop after this many seconds.")
    var duration: Double?

    func validate() throws {
        guard wait > 0, wait <= 60 else { throw ValidationError("--wait must be between 0 and 60 seconds") }
        if let duration, !(duration > 0) { throw ValidationError("--for must be a positive number of seconds") }
    }

    func run() throws {
        let settings = try CommandEnvironment.loadConfig(explicit: config, environment: environment()).mqtt
        let url = broker ?? settings.map { "\($0.scheme)://\($0.host):\($0.port)" } ?? "mqtt://127.0.0.1:1883"
        guard let (scheme, host, port) = MQTTSettings.parseURL(url) else { throw ValidationError("--broker must be mqtt://host[:port], not \"\(url)\"") }
        guard scheme == "mqtt" else { throw ValidationError("castline fleet speaks plain mqtt:// only; \(url) needs TLS") }
        let user = username ?? settings?.username
        let passwordPath = passwordFile ?? settings?.passwordFile
        var password: String?
        if let passwordPath {
            guard let bytes = try? SmallFile.read(path: passwordPath, limit: 4096),
                  let first = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first else {
                printError("castline fleet: cannot read the password file \(passwordPath)")
                throw CastlineExit.failure
            }
            password = String(first)
        }
        var view = FleetView(base: baseTopic ?? settings?.baseTopic ?? "castline")
        let connection: MQTTWatch
        do {
            connection = try MQTTWatch(host: host, port: port, clientID: "castline-fleet-\(getpid())", username: user, password: password,
                                       filters: view.filters)
        } catch {
            printError("castline fleet: \(url): \(error)")
            throw CastlineExit.failure
        }
        defer { connection.close() }
        let started = MonotonicClock.seconds()
        do {
            try connection.receive(until: started + wait) { view.apply(topic: $0, payload: $1) }
        } catch {
            printError("castline fleet: \(url): \(error)")
            throw CastlineExit.failure
        }
        print(view)
        guard follow else { return }
        let end = duration.map { started + wait + $0 } ?? .infinity
        do {
            while MonotonicClock.seconds() < end {
                var changed = false
                try connection.receive(until: min(end, MonotonicClock.seconds() + 1)) { changed = view.apply(topic: $0, payload: $1) || changed }
                if changed { print(view) }
            }
        } catch {
            printError("castline fleet: \(url): \(error)")
            throw CastlineExit.failure
        }
    }

    private func print(_ view: FleetView) {
        if json { printLine(view.json.serialized()) } else { for line in view.lines { printLine(line) } }
    }
}
