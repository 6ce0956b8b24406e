import ArgumentParser
import CastCore
import CastProtocol
import CastlineDaemon

/// Where a device command is carried out: a running `castline run` over its socket
/// (``DaemonClient``), or, when none answers or with `--direct`, the hub's own registry and
/// control plane in this process (``LocalHub``). Commands are written once against this: the
/// same actions, the same answers and errors; only where the sessions live differs.
protocol ControlTarget: Sendable {
    /// The references (ids) of the devices `--device` names; a glob: every match. Prints why and
    /// throws the exit code when none does.
    func devices(_ text: String?) async throws -> [String]
    /// A device action as the API names it (`cast`, `play`, `volume`, …) with its body.
    func act(_ device: String, action: String, body: JSONValue?) async -> Result<JSONValue, ControlError>
    /// A hub action by its route (`POST /v1/sync`, `GET /v1/sync`), with its body.
    func hub(_ method: String, _ path: String, body: JSONValue?) async -> Result<JSONValue, ControlError>
    /// The device's object (`GET /v1/devices/{device}`).
    func show(_ device: String) async -> Result<JSONValue, ControlError>
    /// Yields each time something about the device may have changed (media, session, device
    /// events); ends when the source does.
    func changes(of device: String) -> AsyncStream<Void>
    /// Frees what the target holds; casts keep running.
    func close() async
}

extension ControlTarget {
    /// The device's object, or the error printed and thrown as its exit code.
    func showOrExit(_ device: String) async throws -> JSONValue {
        switch await show(device) {
        case .success(let json): return json
        case .failure(let error): throw CommandOutput.exit(error)
        }
    }

    /// Runs `action` on every device `--device` names, at once, and prints each answer (one
    /// line, or one JSON object per line) in the order of the devices; the exit code is the
    /// worst of them (1 before 4 before the others). Returns the devices that succeeded.
    @discardableResult
    func run(action: String, body: JSONValue?, device text: String?, json: Bool,
             extra: (@Sendable (String, JSONValue) -> JSONValue)? = nil) async throws -> [String] {
        let devices = try await devices(text)
        let results = await withTaskGroup(of: (Int, Result<JSONValue, ControlError>).self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask { (index, await self.act(device, action: action, body: body)) }
            }
            var results: [(Int, Result<JSONValue, ControlError>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var worst: ControlError?
        var succeeded: [String] = []
        for (device, result) in zip(devices, results) {
            switch result {
            case .success(let answer):
                CommandOutput.print(extra?(device, answer) ?? answer, json: json)
                succeeded.append(device)
            case .failure(let error):
                printError("castline: \(error.message)")
                if worst == nil || error.exitCode == 1 { worst = error }
            }
        }
        if let worst { throw ExitCode(worst.exitCode) }
        return succeeded
    }
}

/// How commands print devices and errors, whichever target answered.
enum CommandOutput {
    /// One device: its one-line summary, or its JSON object on one line.
    static func print(_ answer: JSONValue, json: Bool) {
        if json {
            printLine(answer.serialized())
        } else if answer["dryRun"]?.bool == true {
            let device = answer["device"]?.string ?? "?"
            printLine("\(device) (\(answer["family"]?.string ?? "unknown family")): \(answer["decision"]?.string ?? "")")
            for stream in answer["streams"]?.array ?? [] { printLine("  \(stream.string ?? "")") }
        } else if let site = SiteLine(answer) {
            for line in site.lines { printLine(line) }
        } else if answer["announcement"] != nil {
            let device = answer["device"]?.string ?? "?"
            let media = answer["announcement"]?.string ?? ""
            guard let restored = answer["restored"] else {
                printLine("\(device): announcing \(media) (the daemon restores the device afterwards)")
                return
            }
            let seconds = answer["seconds"]?.double.map { " (\($0) s)" } ?? ""
            var line = "\(device): announced \(media)\(seconds); "
            switch restored {
            case .bool(true): line += "restored"
            case .string(let partly): line += "restored \(partly): \(answer["reason"]?.string ?? "")"
            default: line += "not restored: \(answer["reason"]?.string ?? "")"
            }
            if let failed = answer["announcementError"]?.string { line += " (the announcement failed: \(failed))" }
            printLine(line)
            if let after = answer["after"], let snapshot = StatusSnapshot(json: after, receivedAt: MonotonicClock.seconds()) {
                printLine("  now: " + StatusView.oneLine(snapshot))
            }
        } else if let snapshot = StatusSnapshot(json: answer, receivedAt: MonotonicClock.seconds()) {
            printLine(StatusView.oneLine(snapshot))
        }
    }

    /// The error printed, as its exit code.
    static func exit(_ error: ControlError) -> ExitCode {
        printError("castline: \(error.message)")
        return ExitCode(error.exitCode)
    }
}

/// A site answer as the lines `castline site` prints: why it was routed there, what shows
/// where, forced or framed and why, and the pre-flight's notes.
struct SiteLine {
    let answer: JSONValue

    init?(_ answer: JSONValue) {
        guard answer["site"]?.string != nil, answer["app"]?.string != nil else { return nil }
        self.answer = answer
    }

    var lines: [String] {
        var lines: [String] = []
        if let routed = answer["routed"]?.string { lines.append(routed) }
        let device = answer["device"]?.string ?? answer["id"]?.string ?? "?"
        let app = answer["app"]?.string ?? ""
        let appName = app == SiteArguments.homeAssistantApp ? "Home Assistant Cast" : app == SiteArguments.dashCastApp ? "DashCast" : app
        var line = "\(device): showing \(answer["site"]?.string ?? "") with \(appName) (\(app))"
        if answer["force"]?.bool == true { line += ", forced" }
        lines.append(line)
        if case .array(let notes)? = answer["notes"] {
            for note in notes { if let text = note.string { lines.append("  note: \(text)") } }
        }
        return lines
    }
}
