import ArgumentParser
import CastCore
import CastProtocol
import CastSender
import CastlineDaemon

/// Options every control command has.
struct ControlOptions: ParsableArguments {
    @OptionGroup var device: DeviceOptions
    @Flag(name: .long, help: "Print the resulting status as JSON (one object per device per line).")
    var json = false
    @Flag(name: .long, help: "Talk to the device directly even when a castline daemon runs (default: through the daemon's socket when it answers).")
    var direct = false
    @Option(name: .long, help: ArgumentHelp("The daemon's API socket (default: config api.socket, then the default places).", valueName: "path"))
    var apiSocket: String?

    /// The running daemon to go through, unless `--direct` or none answers.
    var daemon: DaemonClient? { DaemonClient.find(direct: direct, apiSocket: apiSocket, config: device.config, device: device.device) }
}

/// A control command: through the daemon when one runs (the action and its body, as the API
/// takes them), else directly: resolve the devices, join the app that runs there, act, print.
protocol DeviceControlCommand: AsyncParsableCommand, Sendable {
    var options: ControlOptions { get }
    var policy: CastOptions.JoinPolicy { get }
    /// The API's action and body for this command.
    var daemonAction: (name: String, body: JSONValue?) { get }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias>
}

typealias CastRequestErrorAlias = CastRequestError

extension DeviceControlCommand {
    var policy: CastOptions.JoinPolicy { .joinAnyMediaApp }

    func runControl() async throws {
        if let daemon = options.daemon {
            try daemon.run(action: daemonAction.name, body: daemonAction.body, device: options.device.device, json: options.json)
            return
        }
        let environment = try CommandEnvironment(options: options.device.request, featureKinds: [])
        do {
            try await DeviceRunner(environment: environment, json: options.json, policy: policy).run { session in await act(session) }
        } catch {
            await environment.shutdown()
            throw error
        }
        await environment.shutdown()
    }
}

struct PlayCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Resume playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    var daemonAction: (name: String, body: JSONValue?) { ("play", nil) }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> { await session.remoteMediaClient.play().outcome }
    func run() async throws { try await runControl() }
}

struct PauseCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    var daemonAction: (name: String, body: JSONValue?) { ("pause", nil) }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> { await session.remoteMediaClient.pause().outcome }
    func run() async throws { try await runControl() }
}

struct StopCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop the media (with --app: stop the receiver app, ending the cast).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Stop the receiver app instead of only the media.")
    var app = false
    var daemonAction: (name: String, body: JSONValue?) { ("stop", app ? ["app": true] : nil) }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        if app {
            await session.end(stopCasting: true)
            return .success(())
        }
        return await session.remoteMediaClient.stop().outcome
    }
    func run() async throws { try await runControl() }
}

struct SeekCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek", abstract: "Seek to a position (90, 1:30, 1:02:03) or by an offset (+30, -10).",
        discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    /// An array only so that `-30` is taken as a value, not an option.
    @Argument(parsing: .allUnrecognized, help: "Seconds or [h:]mm:ss; a leading + or - seeks relative to the current position.")
    var positions: [String]
    var position: String { positions.first ?? "" }
    var daemonAction: (name: String, body: JSONValue?) { ("seek", ["position": .string(position)]) }

    func validate() throws {
        guard positions.count == 1 else { throw ValidationError("seek takes one position (e.g. 90, 1:30, +30, -10)") }
        do { _ = try ControlArguments.seek(position) } catch { throw ValidationError(error.message) }
    }

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        guard let seek = try? ControlArguments.seek(position) else { return .failure(.invalidRequest(nil)) }
        if seek.relative { return await session.remoteMediaClient.seek(by: seek.seconds).outcome }
        return await session.remoteMediaClient.seek(to: seek.seconds).outcome
    }
    func run() async throws { try await runControl() }
}

struct VolumeCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume", abstract: "Set the device volume in percent (50) or change it (+10, -10).",
        discussion: "With --stream: the stream volume of the media instead of the device's. The device volume works on an idle device too.\n"
            + CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    /// An array only so that `-10` is taken as a value, not an option.
    @Argument(parsing: .allUnrecognized, help: "A whole percent 0-100, or +N / -N percent points.")
    var levels: [String]
    var level: String { levels.first ?? "" }
    @Flag(name: .long, help: "Set the media stream's volume instead of the device's.")
    var stream = false
    var daemonAction: (name: String, body: JSONValue?) { ("volume", ["level": .string(level), "stream": .bool(stream)]) }
    /// The device volume needs no app: a device session, which also works on an idle device.
    var policy: CastOptions.JoinPolicy { stream ? .joinAnyMediaApp : .follow }

    func validate() throws {
        guard levels.count == 1 else { throw ValidationError("volume takes one level (e.g. 50, +10, -10)") }
        do { _ = try ControlArguments.volume(level) } catch { throw ValidationError(error.message) }
    }

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        guard let volume = try? ControlArguments.volume(level) else { return .failure(.invalidRequest(nil)) }
        if stream {
            let current = session.remoteMediaClient.mediaStatus?.volume?.level ?? 1
            return await session.remoteMediaClient.setStreamVolume(volume.level(from: current)).outcome
        }
        let current = await session.deviceStatus?.volumeLevel ?? 0
        return await session.setDeviceVolume(volume.level(from: current)).outcome
    }
    func run() async throws { try await runControl() }
}

struct MuteCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "mute", abstract: "Mute the device (--off: unmute).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Unmute instead.")
    var off = false
    @Flag(name: .long, help: "Mute the media stream instead of the device.")
    var stream = false
    var daemonAction: (name: String, body: JSONValue?) { ("mute", ["muted": .bool(!off), "stream": .bool(stream)]) }
    var policy: CastOptions.JoinPolicy { stream ? .joinAnyMediaApp : .follow }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        if stream { return await session.remoteMediaClient.setStreamMuted(!off).outcome }
        return await session.setDeviceMuted(!off).outcome
    }
    func run() async throws { try await runControl() }
}

struct QueueCommand: DeviceControlCommand {
    enum Action: String, ExpressibleByArgument, CaseIterable { case next, prev, jump, remove, `repeat` }
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "Queue control: next, prev, jump ITEM_ID, remove ITEM_ID…, repeat off|all|single|shuffle.",
        discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Argument(help: "next | prev | jump | remove | repeat")
    var action: Action
    @Argument(help: "Item ids (jump, remove) or the repeat mode.")
    var values: [String] = []

    var daemonAction: (name: String, body: JSONValue?) {
        action == .`repeat` ? ("queue", ["action": "repeat", "mode": .string(values.first ?? "")])
            : ("queue", ["action": .string(action.rawValue), "items": .array(values.map { .string($0) })])
    }

    func validate() throws {
        do { _ = try ControlArguments.queue(action: action.rawValue, values: values) } catch { throw ValidationError(error.message) }
    }

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        let client = session.remoteMediaClient
        switch try? ControlArguments.queue(action: action.rawValue, values: values) {
        case .next?: return await client.queueNext().outcome
        case .previous?: return await client.queuePrevious().outcome
        case .jump(let item)?: return await client.queueJump(toItemID: item).outcome
        case .remove(let items)?: return await client.queueRemove(itemIDs: items).outcome
        case .repeatMode(let mode)?: return await client.queueSetRepeatMode(mode).outcome
        case nil: return .failure(.invalidRequest(nil))
        }
    }
    func run() async throws { try await runControl() }
}
