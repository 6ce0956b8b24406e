import ArgumentParser
import CastCore
import CastLogging
import CastNearby
import CastlineConfig
import Glibc

/// `castline nearby publish|subscribe|permission`: nearby messages between hosts on the LAN.
struct NearbyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby",
        abstract: "Publish and subscribe to small nearby messages over the LAN (DNS-SD through avahi-daemon), with consent.",
        discussion: """
            A message is a namespace, a type and up to \(NearbyMessage.maxContentBytes) bytes of content (one mDNS \
            packet; larger content is refused, never truncated). Nothing is published or browsed until the \
            permission is granted: `castline nearby permission grant` (stored in the state folder: --state-dir, \
            CASTLINE_STATE_DIR, STATE_DIRECTORY, XDG_STATE_HOME/castline or ~/.local/state/castline). Revoking it \
            stops every running publisher and subscriber within a second; granting it again resumes them.
            Lost: within about a second when a publisher stops (even kill -9, when its avahi-daemon lives); within \
            \(NearbyDNSRecords.recordTTL + UInt32(NearbyDNSRecords.lossSlackSeconds)) s when its host vanishes \
            (power loss). Logging classes: Nearby* (e.g. --log "Nearby*:debug").
            """,
        subcommands: [NearbyPublishCommand.self, NearbySubscribeCommand.self, NearbyPermissionCommand.self])
}

/// Options every nearby command shares.
struct NearbyOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Config file (YAML): its nearby and logging sections. Default: $CASTLINE_CONFIG, then ~/.config/castline/castline.yaml if present.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("The folder holding the nearby permission (default: the config's nearby.state_dir, $CASTLINE_STATE_DIR, $STATE_DIRECTORY, $XDG_STATE_HOME/castline, ~/.local/state/castline).", valueName: "dir"))
    var stateDir: String?

    @Flag(name: .long, help: "JSON lines on stdout.")
    var json = false

    @Option(name: .long, help: "Log rules, e.g. \"Nearby*:debug\" (overrides CASTLINE_LOG).")
    var log: String?

    /// The config file (exit 2 on errors, printed as file:line:column), or the defaults.
    func loadConfig() throws -> CastlineConfiguration {
        try CommandEnvironment.loadConfig(explicit: config, environment: environment())
    }

    /// --state-dir, the config's nearby.state_dir, then the environment's state folder.
    func stateDirectory(_ config: CastlineConfiguration) -> String {
        stateDir ?? config.nearby.stateDir ?? NearbyPermissionStore.defaultDirectory(environment: environment())
    }

    /// Console logging at warning unless the rules (config, CASTLINE_LOG, --log) say otherwise.
    func makeLogSystem(_ config: CastlineConfiguration) throws -> LogSystem {
        let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .warning))
        logSystem.addSink(ConsoleLogSink())
        if let rules = config.logging.rules { try? logSystem.applyRules(rules, source: config.file) }
        if let error = logSystem.applyEnvironment(environment()) { throw ValidationError("CASTLINE_LOG: \(error)") }
        if let log {
            do { try logSystem.applyRules(log, source: "--log") } catch { throw ValidationError("--log: \(error)") }
        }
        return logSystem
    }
}

/// Options of the commands that use the medium.
struct NearbyMediumOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Only this network interface counts (availability, results). Repeatable. Default: the config's nearby.interfaces, else every multicast interface.", valueName: "name"))
    var interface: [String] = []

    @Flag(name: .long, help: "Without permission: wait until it is granted instead of exiting with code 4.")
    var waitForPermission = false
}

/// The manager of one nearby command, its printer and the events its main loop waits for.
final class NearbyRuntime: @unchecked Sendable {
    enum Event: Sendable {
        case signal
        case expired
        case permission(NearbyPermission)
        case found
    }

    let logSystem: LogSystem
    let permissions: NearbyPermissionStore
    let printer: NearbyPrinter
    let events: AsyncStream<Event>
    let continuation: AsyncStream<Event>.Continuation
    private let interfaces: [String]
    private let waitForPermission: Bool
    private var started: NearbyMessagesManager?

    /// The config, logging, the permission store and the signal watch; the medium starts in ``start(_:)``.
    init(options: NearbyOptions, medium: NearbyMediumOptions) throws {
        let config = try options.loadConfig()
        logSystem = try options.makeLogSystem(config)
        permissions = NearbyPermissionStore(directory: options.stateDirectory(config), logSystem: logSystem)
        interfaces = medium.interface.isEmpty ? config.nearby.interfaces : medium.interface
        waitForPermission = medium.waitForPermission
        printer = NearbyPrinter(json: options.json)
        (events, continuation) = AsyncStream<Event>.makeStream()
        Task { [continuation] in
            _ = await SignalWaiter.wait([SIGINT, SIGTERM])
            continuation.yield(.signal)
        }
    }

    /// The manager (after ``start()``).
    var manager: NearbyMessagesManager { started! }

    /// How ``start(_:)`` ended.
    enum Start {
        case started
        /// A signal, or the command's own timeout (`.expired`), came while waiting for the permission.
        case interrupted(Event)
    }

    /// Waits for the permission when asked to (without it: exit 4 with the reason), then connects
    /// the medium and starts the manager. `events` is the command's one iterator over ``events``
    /// (a second iterator would find the stream ended).
    func start(_ events: inout AsyncStream<Event>.Iterator) async throws -> Start {
        if !permissions.permission.isGranted {
            let reason = NearbyError.permissionRequired(permissions.permission).description
            guard waitForPermission else {
                printError("castline: nearby: \(reason)")
                throw CastlineExit.refused
            }
            printer.waiting(reason)
            let continuation = self.continuation
            let token = permissions.onChange { continuation.yield(.permission($0)) }
            defer { permissions.removeHandler(token) }
            waiting: while let event = await events.next() {
                switch event {
                case .signal, .expired: return .interrupted(event)
                case .permission(let p) where p.isGranted: break waiting
                default: continue
                }
            }
            printer.status(.permission(.granted))
        }
        let avahi: NearbyAvahiMedium
        do {
            avahi = try NearbyAvahiMedium(interfaces: interfaces.isEmpty ? nil : Set(interfaces), logSystem: logSystem)
        } catch {
            printError("castline: nearby: \(error)")
            throw CastlineExit.failure
        }
        let printer = self.printer, continuation = self.continuation
        started = NearbyMessagesManager(media: [avahi], permissions: permissions, logSystem: logSystem) { change in
            printer.status(change)
            if case .permission(let permission) = change { continuation.yield(.permission(permission)) }
        }
        return .started
    }

    /// Prints a refused operation and ends with its exit code.
    func fail(_ error: NearbyError) -> ExitCode {
        printError("castline: nearby: \(error)")
        switch error {
        case .permissionRequired: return CastlineExit.refused
        case .contentTooLarge, .invalidNamespace, .invalidType, .strategyForbids: return CastlineExit.usage
        case .mediumNotConfigured, .closed: return CastlineExit.failure
        }
    }

    func close() {
        started?.close()
        _ = logSystem.shutdown()
    }
}

/// Prints nearby events as text (stdout for messages, stderr for status) or JSON lines (stdout).
struct NearbyPrinter: Sendable {
    let json: Bool

    static func object(_ sighting: NearbySighting, event: String) -> JSONValue {
        let m = sighting.message
        return .object([
            "event": .string(event), "namespace": .string(m.namespace), "type": .string(m.type),
            "content": m.text.map { .string($0) } ?? .null, "content_base64": .string(Base64.encode(m.content)),
            "bytes": .int(Int64(m.content.count)), "publisher": .string(sighting.publisher), "medium": .string(sighting.medium.rawValue),
        ])
    }

    func sighting(_ sighting: NearbySighting, found: Bool) {
        if json { return printLine(Self.object(sighting, event: found ? "found" : "lost").serialized()) }
        printLine("\(found ? "+" : "-") \(sighting.message) (from \(sighting.publisher))")
    }

    func status(_ change: NearbyStatusChange) {
        switch change {
        case .permission(let permission):
            if json { return printLine(JSONValue.object(["event": "permission", "permission": .string(permission.word)]).serialized()) }
            printError("castline: nearby permission is now \(permission.word)"
                       + (permission.isGranted ? "" : ": publications withdrawn, subscriptions suspended until it is granted"))
        case .medium(let kind, let state):
            if json {
                var o: JSONObject = ["event": "medium", "medium": .string(kind.rawValue), "available": .bool(state.isAvailable)]
                if case .unavailable(let reason) = state { o.set("reason", .string(reason)) }
                return printLine(JSONValue.object(o).serialized())
            }
            printError("castline: nearby: the \(kind.rawValue) medium is \(state)"
                       + (state.isAvailable ? "" : "; publications and subscriptions resume when it is back"))
        }
    }

    func waiting(_ reason: String) {
        if json { return printLine(JSONValue.object(["event": "waiting", "reason": .string(reason)]).serialized()) }
        printError("castline: nearby: waiting: \(reason)")
    }

    func line(_ event: String, _ fields: JSONObject, text: String) {
        var o = fields
        o.set("event", .string(event))
        if json { return printLine(JSONValue.object(o).serialized()) }
        printError("castline: nearby: \(text)")
    }
}
