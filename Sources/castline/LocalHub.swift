import ArgumentParser
import CastCore
import CastlineDaemon

/// Direct mode: the hub's ``DeviceRegistry`` and ``ControlPlane`` in this process, for one
/// command. The devices `--device` names are resolved as every command resolves them (config
/// devices, addresses, discovery) and handed to the registry; the command then runs exactly as
/// `castline run` runs it, on a session that follows the device. Closing leaves the devices:
/// casts keep running.
final class LocalHub: ControlTarget {
    let environment: CommandEnvironment
    let daemon: Daemon
    let plane: ControlPlane

    /// `servePort`: the port a local file is served on (0: any free port).
    init(environment: CommandEnvironment, servePort: Int = 0) {
        self.environment = environment
        var config = environment.config
        config.jobs = []
        let layers = LogRuleLayers(config: nil, configSource: config.file, environment: nil, commandLine: nil, defaultMinimum: .warning)
        // Direct mode serves the files its user names, from this process (run as that user).
        daemon = Daemon(config: config, providers: [], logSystem: environment.logSystem, group: environment.group, logLayers: layers,
                        jobStore: nil, plugins: HostChannelPlugins(host: environment.plugins), linkRetryDelay: nil,
                        localMedia: .anywhere, mediaPorts: servePort == 0 ? nil : servePort...servePort)
        let plugins = environment.plugins
        plane = ControlPlane(daemon: daemon, config: config, logSystem: environment.logSystem, group: environment.group,
                             probe: { media, type, head in plugins.probeMediaFormat(url: media, contentType: type, body: head).mapError { $0 } })
    }

    func devices(_ text: String?) async throws -> [String] {
        let found = try await environment.resolveDevices()
        for device in found { await daemon.registry.deviceFound(device) }
        return found.map(\.id)
    }

    func act(_ device: String, action: String, body: JSONValue?) async -> Result<JSONValue, ControlError> {
        do throws(ControlError) {
            return await plane.execute(try ControlAction.device(device, action: action, body: body ?? .object([:])))
        } catch {
            return .failure(error)
        }
    }

    func hub(_ method: String, _ path: String, body: JSONValue?) async -> Result<JSONValue, ControlError> {
        let segments = path.split(separator: "/").map(String.init)
        switch ControlAction.resolve(method: method, segments: segments, body: body.map { Array($0.serialized().utf8) } ?? []) {
        case .success(.command(let command)): return await plane.execute(command)
        case .success: return .failure(ControlError(.internal, "not_a_command", "\(method) \(path) is not a command"))
        case .failure(let failure): return .failure(failure.error)
        }
    }

    /// The device once its link has connected (a command's answer is what the device says, not
    /// "connecting"), or why it could not. A device that connected once and is lost now is shown
    /// as it is, UNKNOWN, so a follower stays with it through the outage.
    func show(_ device: String) async -> Result<JSONValue, ControlError> {
        do { _ = try await daemon.registry.link(device) } catch {
            guard await daemon.registry.entry(device)?.unreachableSince != nil else { return .failure(error) }
        }
        return await plane.execute(.showDevice(device))
    }

    func changes(of device: String) -> AsyncStream<Void> {
        let subscription = daemon.events.subscribe([.media, .device, .session])
        return AsyncStream { continuation in
            let task = Task {
                for await event in subscription.events where event.device == device { continuation.yield() }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                task.cancel()
                subscription.cancel()
            }
        }
    }

    func close() async {
        await plane.shutdown()
        await daemon.registry.shutdown(stopping: [])
        await environment.shutdown()
    }
}
