import ArgumentParser
import CastCore
import CastProtocol
import CastlineAPI
import CastlineConfig
import CastlineDaemon
import Glibc

/// A command's way through a running `castline run`: the daemon's socket (`--api-socket`, the
/// config's `api.socket`, else the default places), its answers printed as direct mode prints
/// them, its errors as exit codes. Nil when no daemon answers (or `--direct`): direct mode then.
struct DaemonClient {
    let client: ControlClient

    /// The daemon a command for `device` should use, if one answers. A device given as an
    /// address the daemon does not know is reached directly.
    static func find(direct: Bool, apiSocket: String?, config: String?, device: String? = nil) -> DaemonClient? {
        if direct { return nil }
        guard let daemon = find(apiSocket: apiSocket, config: config) else { return nil }
        if let device, let host = try? DiscoverCommand.parseHost(device), CommandEnvironment.isAddress(host.host),
           let answer = try? daemon.client.send("GET", path(device)), answer.status == 404 {
            return nil
        }
        return daemon
    }

    private static func find(apiSocket: String?, config: String?) -> DaemonClient? {
        let env = environment()
        var candidates: [String]
        if let apiSocket {
            candidates = [apiSocket]
        } else if let socket = configuredSocket(explicit: config, environment: env) {
            candidates = [socket]
        } else {
            candidates = APISocketPath.candidates(environment: env)
        }
        for path in candidates {
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { continue }
            // A stale file (a daemon that crashed) answers nothing: keep looking.
            if SocketProbe.answers(path) { return DaemonClient(client: ControlClient(endpoint: .unix(path))) }
        }
        return nil
    }

    /// The config's `api.socket`, if the config (found as every command finds it) sets one.
    static func configuredSocket(explicit: String?, environment env: [String: String]) -> String? {
        guard let path = DoctorChecks.configPath(explicit: explicit, environment: env, exists: { access($0, F_OK) == 0 }).path,
              let (config, _) = try? CastlineConfiguration.load(path: path) else { return nil }
        return config.api.socket
    }

    /// One request; the answer's JSON, or the daemon's error printed and thrown as its exit code.
    @discardableResult
    func send(_ method: String, _ path: String, body: JSONValue? = nil, prefix: String = "castline") throws -> JSONValue {
        try sendRaw(method, path, raw: body.map { Array($0.serialized().utf8) }, prefix: prefix)
    }

    /// The same with a body given as text (a job in YAML or JSON).
    @discardableResult
    func sendRaw(_ method: String, _ path: String, text: String, prefix: String = "castline") throws -> JSONValue {
        try sendRaw(method, path, raw: Array(text.utf8), prefix: prefix)
    }

    private func sendRaw(_ method: String, _ path: String, raw: [UInt8]?, prefix: String) throws -> JSONValue {
        let response: ControlClient.Response
        do { response = try client.send(method, path, raw: raw) } catch {
            printError("\(prefix): the daemon at \(client.endpoint) did not answer: \(error)")
            throw CastlineExit.failure
        }
        let json = response.json ?? .null
        guard (200..<300).contains(response.status) else {
            let error = ControlError(json: json) ?? ControlError(.internal, "http_\(response.status)", "the daemon answered \(response.status)")
            printError("\(prefix): \(error.message)")
            throw ExitCode(error.exitCode)
        }
        return json
    }

    /// The references of the devices `--device` names: itself, or for a glob every known device
    /// that matches (by name, id or alias).
    func devices(_ text: String?) throws -> [String] {
        guard let text else {
            printError("castline: --device is required (a name, alias, glob, device id or host[:port]); `castline status --json` lists devices")
            throw CastlineExit.usage
        }
        guard text.contains(where: { "*?[".contains($0) }) else { return [text] }
        let selector: DeviceSelector
        do { selector = try DeviceSelector(text) } catch {
            printError("castline: --device \(text): \(error)")
            throw CastlineExit.usage
        }
        let known = try send("GET", "/v1/devices")["devices"]?.array ?? []
        let matches = known.compactMap { device -> String? in
            guard let id = device["id"]?.string, let name = device["device"]?.string else { return nil }
            let aliases = device["aliases"]?.array?.compactMap(\.string) ?? []
            return selector.matches(name: name, id: id, aliases: aliases) ? id : nil
        }
        guard !matches.isEmpty else {
            printError("castline: no device known to the daemon matches \(text)")
            throw CastlineExit.noDevice
        }
        return matches
    }

    /// `/v1/devices/<reference>/<action>`, the reference percent-encoded.
    static func path(_ device: String, _ action: String? = nil) -> String {
        "/v1/devices/" + percentEncoded(device) + (action.map { "/" + $0 } ?? "")
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: out.append(Character(UnicodeScalar(byte)))
            default: out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }

    /// Runs a device action on every device `--device` names and prints each result as direct
    /// mode does (one line, or one JSON object per line); the exit code is the worst.
    func run(action: String, body: JSONValue?, device text: String?, json: Bool, extra: ((String, JSONValue) -> JSONValue)? = nil) throws {
        var exit: ExitCode?
        for device in try devices(text) {
            do {
                var answer = try send("POST", Self.path(device, action), body: body)
                if let extra { answer = extra(device, answer) }
                print(answer, json: json)
            } catch let code as ExitCode {
                if exit == nil || code.rawValue == 1 { exit = code }
            }
        }
        if let exit { throw exit }
    }

    func print(_ answer: JSONValue, json: Bool) {
        if json {
            printLine(answer.serialized())
        } else if let snapshot = StatusSnapshot(json: answer, receivedAt: MonotonicClock.seconds()) {
            printLine(DeviceRunner.oneLine(snapshot))
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
