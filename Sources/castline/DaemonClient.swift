import ArgumentParser
import CastCore
import CastProtocol
import CastlineAPI
import CastlineConfig
import CastlineDaemon
import Dispatch
import Glibc
import Synchronization

/// A command's way through a running `castline run`: the daemon's socket (`--api-socket`, the
/// config's `api.socket`, else the default places). Nil when no daemon answers (or `--direct`):
/// the command then runs on a ``LocalHub``.
struct DaemonClient: Sendable {
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

    /// The config's `api.socket`, if the config (found as every command finds it) sets one: read
    /// alone (``CastlineConfiguration/apiSocket(path:)``), the rest of the config not decoded.
    static func configuredSocket(explicit: String?, environment env: [String: String]) -> String? {
        guard let path = DoctorChecks.configPath(explicit: explicit, environment: env, exists: { access($0, F_OK) == 0 }).path else { return nil }
        return CastlineConfiguration.apiSocket(path: path)
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
        switch request(method, path, raw: raw) {
        case .success(let json): return json
        case .failure(let error):
            printError("\(prefix): \(error.message)")
            throw ExitCode(error.exitCode)
        }
    }

    /// One request: the answer's JSON, or the daemon's error (an unanswered request: exit 1).
    func request(_ method: String, _ path: String, raw: [UInt8]?) -> Result<JSONValue, ControlError> {
        let response: ControlClient.Response
        do { response = try client.send(method, path, raw: raw) } catch {
            return .failure(ControlError(.internal, "no_answer", "the daemon at \(client.endpoint) did not answer: \(error)"))
        }
        let json = response.json ?? .null
        guard (200..<300).contains(response.status) else {
            return .failure(ControlError(json: json) ?? ControlError(.internal, "http_\(response.status)", "the daemon answered \(response.status)"))
        }
        return .success(json)
    }

    /// The references of the devices `--device` names: itself, or for a glob every known device
    /// that matches (by name, id or alias).
    func devices(_ text: String?) async throws -> [String] {
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

    func act(_ device: String, action: String, body: JSONValue?) async -> Result<JSONValue, ControlError> {
        request("POST", Self.path(device, action), raw: body.map { Array($0.serialized().utf8) })
    }

    func hub(_ method: String, _ path: String, body: JSONValue?) async -> Result<JSONValue, ControlError> {
        request(method, path, raw: body.map { Array($0.serialized().utf8) })
    }

    func show(_ device: String) async -> Result<JSONValue, ControlError> {
        request("GET", Self.path(device), raw: nil)
    }

    /// The daemon's event stream, read on a thread of its own (the client's reads block), for
    /// this device's media, device and session events. It ends with the stream; once nobody
    /// listens, the reader stops at the next line (at worst the 15 s keep-alive).
    func changes(of device: String) -> AsyncStream<Void> {
        let id: String
        if case .success(let json) = request("GET", Self.path(device), raw: nil), let known = json["id"]?.string { id = known } else { id = device }
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let listening = ListeningFlag()
        continuation.onTermination = { _ in listening.stop() }
        let client = self.client
        DispatchQueue(label: "castline.events").async {
            try? client.stream("/v1/events?kinds=media,device,session") { line in
                guard listening.isOn else { return false }
                if line.hasPrefix("data: "), let event = try? JSONValue.parse(String(line.dropFirst(6))), event["device"]?.string == id {
                    continuation.yield()
                }
                return true
            }
            continuation.finish()
        }
        return stream
    }

    func close() async {}
}

extension DaemonClient: ControlTarget {}

/// Whether the event stream's reader still has a listener.
private final class ListeningFlag: Sendable {
    private let on = Atomic(true)
    var isOn: Bool { on.load(ordering: .relaxed) }
    func stop() { on.store(false, ordering: .relaxed) }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
