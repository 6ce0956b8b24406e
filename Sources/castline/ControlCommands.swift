import ArgumentParser
import CastCore
import CastProtocol
import CastSender

/// Options every control command has.
struct ControlOptions: ParsableArguments {
    @OptionGroup var device: DeviceOptions
    @Flag(name: .long, help: "Print the resulting status as JSON (one object per device per line).")
    var json = false
}

/// A control command: resolve the devices, join the media app that runs there, act, print.
protocol ControlCommand: AsyncParsableCommand, Sendable {
    var options: ControlOptions { get }
    var policy: CastOptions.JoinPolicy { get }
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias>
}

typealias CastRequestErrorAlias = CastRequestError

extension ControlCommand {
    var policy: CastOptions.JoinPolicy { .joinAnyMediaApp }

    func runControl() async throws {
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

struct PlayCommand: ControlCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Resume playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> { await session.remoteMediaClient.play().outcome }
    func run() async throws { try await runControl() }
}

struct PauseCommand: ControlCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> { await session.remoteMediaClient.pause().outcome }
    func run() async throws { try await runControl() }
}

struct StopCommand: ControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop the media (with --app: stop the receiver app, ending the cast).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Stop the receiver app instead of only the media.")
    var app = false
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        if app {
            await session.end(stopCasting: true)
            return .success(())
        }
        return await session.remoteMediaClient.stop().outcome
    }
    func run() async throws { try await runControl() }
}

struct SeekCommand: ControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek", abstract: "Seek to a position (90, 1:30, 1:02:03) or by an offset (+30, -10).",
        discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    /// An array only so that `-30` is taken as a value, not an option.
    @Argument(parsing: .allUnrecognized, help: "Seconds or [h:]mm:ss; a leading + or - seeks relative to the current position.")
    var positions: [String]
    var position: String { positions.first ?? "" }

    func validate() throws {
        guard positions.count == 1 else { throw ValidationError("seek takes one position (e.g. 90, 1:30, +30, -10)") }
        _ = try Self.parse(position)
    }

    static func parse(_ text: String) throws -> (seconds: Double, relative: Bool) {
        var body = Substring(text)
        var sign = 0.0
        if body.first == "+" { sign = 1; body = body.dropFirst() } else if body.first == "-" { sign = -1; body = body.dropFirst() }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else {
            throw ValidationError("seek: \"\(text)\" is not seconds or [h:]mm:ss (e.g. 90, 1:30, +30, -10)")
        }
        var seconds = 0.0
        for (index, part) in parts.enumerated() {
            guard let value = Double(part), value >= 0, value.isFinite, index == parts.count - 1 || value == value.rounded() else {
                throw ValidationError("seek: \"\(text)\" is not seconds or [h:]mm:ss (e.g. 90, 1:30, +30, -10)")
            }
            seconds = seconds * 60 + value
        }
        return sign == 0 ? (seconds, false) : (sign * seconds, true)
    }

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        let (seconds, relative) = (try? Self.parse(position)) ?? (0, true)
        if relative { return await session.remoteMediaClient.seek(by: seconds).outcome }
        return await session.remoteMediaClient.seek(to: seconds).outcome
    }
    func run() async throws { try await runControl() }
}

struct VolumeCommand: ControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume", abstract: "Set the device volume in percent (50) or change it (+10, -10).",
        discussion: "With --stream: the stream volume of the media instead of the device's.\n" + CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    /// An array only so that `-10` is taken as a value, not an option.
    @Argument(parsing: .allUnrecognized, help: "0-100, or +N / -N percent points.")
    var levels: [String]
    var level: String { levels.first ?? "" }
    @Flag(name: .long, help: "Set the media stream's volume instead of the device's.")
    var stream = false

    func validate() throws {
        guard levels.count == 1 else { throw ValidationError("volume takes one level (e.g. 50, +10, -10)") }
        _ = try Self.parse(level)
    }

    static func parse(_ text: String) throws -> (percent: Double, relative: Bool) {
        let relative = text.hasPrefix("+") || text.hasPrefix("-")
        let number = text.hasPrefix("+") ? String(text.dropFirst()) : text
        guard let value = Double(number), value.isFinite, relative ? abs(value) <= 100 : (0...100).contains(value) else {
            throw ValidationError("volume: \"\(text)\" must be 0-100 or +N/-N percent points")
        }
        return (value, relative)
    }

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        let (percent, relative) = (try? Self.parse(level)) ?? (0, true)
        if stream {
            let current = session.remoteMediaClient.mediaStatus?.volume?.level ?? 1
            let target = min(1, max(0, relative ? current + percent / 100 : percent / 100))
            return await session.remoteMediaClient.setStreamVolume(target).outcome
        }
        let current = await session.deviceStatus?.volumeLevel ?? 0
        let target = min(1, max(0, relative ? current + percent / 100 : percent / 100))
        return await session.setDeviceVolume(target).outcome
    }
    func run() async throws { try await runControl() }
}

struct MuteCommand: ControlCommand {
    static let configuration = CommandConfiguration(commandName: "mute", abstract: "Mute the device (--off: unmute).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Unmute instead.")
    var off = false
    @Flag(name: .long, help: "Mute the media stream instead of the device.")
    var stream = false
    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        if stream { return await session.remoteMediaClient.setStreamMuted(!off).outcome }
        return await session.setDeviceMuted(!off).outcome
    }
    func run() async throws { try await runControl() }
}

struct QueueCommand: ControlCommand {
    enum Action: String, ExpressibleByArgument, CaseIterable { case next, prev, jump, remove, `repeat` }
    static let configuration = CommandConfiguration(
        commandName: "queue", abstract: "Queue control: next, prev, jump ITEM_ID, remove ITEM_ID…, repeat off|all|single|shuffle.",
        discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Argument(help: "next | prev | jump | remove | repeat")
    var action: Action
    @Argument(help: "Item ids (jump, remove) or the repeat mode.")
    var values: [String] = []

    func validate() throws {
        switch action {
        case .next, .prev:
            guard values.isEmpty else { throw ValidationError("queue \(action.rawValue) takes no values") }
        case .jump:
            guard values.count == 1, Int(values[0]) != nil else { throw ValidationError("queue jump takes one item id") }
        case .remove:
            guard !values.isEmpty, values.allSatisfy({ Int($0) != nil }) else { throw ValidationError("queue remove takes item ids") }
        case .`repeat`:
            guard values.count == 1, Self.repeatModes[values[0]] != nil else {
                throw ValidationError("queue repeat takes one of: " + Self.repeatModes.keys.sorted().joined(separator: ", "))
            }
        }
    }

    static let repeatModes: [String: RepeatMode] = [
        "off": .off, "all": .all, "single": .single, "shuffle": .allAndShuffle,
    ]

    func act(_ session: CastSession) async -> Result<Void, CastRequestErrorAlias> {
        let client = session.remoteMediaClient
        switch action {
        case .next: return await client.queueNext().outcome
        case .prev: return await client.queuePrevious().outcome
        case .jump: return await client.queueJump(toItemID: Int(values[0]) ?? 0).outcome
        case .remove: return await client.queueRemove(itemIDs: values.compactMap { Int($0) }).outcome
        case .`repeat`: return await client.queueSetRepeatMode(Self.repeatModes[values[0]] ?? .off).outcome
        }
    }
    func run() async throws { try await runControl() }
}
