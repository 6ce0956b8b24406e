import ArgumentParser
import CastCore
import CastProtocol
import CastPluginHost
import CastSender
import CastlineDaemon
import CastlineLocalMedia
import Synchronization

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

    /// Where the command runs: the daemon, else a hub in this process with the plugins of
    /// `featureKinds` loaded.
    func target(featureKinds: Set<PluginFeatureKind> = [], servePort: Int = 0) throws -> any ControlTarget {
        if let daemon { return daemon }
        return LocalHub(environment: try CommandEnvironment(options: device.request, featureKinds: featureKinds), servePort: servePort)
    }
}

/// A device control command: its action and body as the API takes them, run on every device
/// `--device` names through the daemon or a hub in this process (``ControlTarget``).
protocol DeviceControlCommand: AsyncParsableCommand, Sendable {
    var options: ControlOptions { get }
    /// The API's action and body for this command.
    var request: (name: String, body: JSONValue?) { get }
}

extension DeviceControlCommand {
    func run() async throws {
        let target = try options.target()
        do {
            try await target.run(action: request.name, body: request.body, device: options.device.device, json: options.json)
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }
}

struct PlayCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Resume playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    var request: (name: String, body: JSONValue?) { ("play", nil) }
}

struct PauseCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback.", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    var request: (name: String, body: JSONValue?) { ("pause", nil) }
}

struct StopCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Stop the media (with --app: stop the receiver app, ending the cast).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Stop the receiver app instead of only the media.")
    var app = false
    var request: (name: String, body: JSONValue?) { ("stop", app ? ["app": true] : nil) }
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
    var request: (name: String, body: JSONValue?) { ("seek", ["position": .string(position)]) }

    func validate() throws {
        guard positions.count == 1 else { throw ValidationError("seek takes one position (e.g. 90, 1:30, +30, -10)") }
        do { _ = try ControlArguments.seek(position) } catch { throw ValidationError(error.message) }
    }
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
    var request: (name: String, body: JSONValue?) { ("volume", ["level": .string(level), "stream": .bool(stream)]) }

    func validate() throws {
        guard levels.count == 1 else { throw ValidationError("volume takes one level (e.g. 50, +10, -10)") }
        do { _ = try ControlArguments.volume(level) } catch { throw ValidationError(error.message) }
    }
}

struct MuteCommand: DeviceControlCommand {
    static let configuration = CommandConfiguration(commandName: "mute", abstract: "Mute the device (--off: unmute).", discussion: CastlineExit.summary)
    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Unmute instead.")
    var off = false
    @Flag(name: .long, help: "Mute the media stream instead of the device.")
    var stream = false
    var request: (name: String, body: JSONValue?) { ("mute", ["muted": .bool(!off), "stream": .bool(stream)]) }
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

    var request: (name: String, body: JSONValue?) {
        action == .`repeat` ? ("queue", ["action": "repeat", "mode": .string(values.first ?? "")])
            : ("queue", ["action": .string(action.rawValue), "items": .array(values.map { .string($0) })])
    }

    func validate() throws {
        do { _ = try ControlArguments.queue(action: action.rawValue, values: values) } catch { throw ValidationError(error.message) }
    }
}

/// `castline announce MEDIA --device D`: play a chime or a message, then bring back what played.
struct AnnounceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announce", abstract: "Play an announcement, then bring back what was playing (media, position, tracks, queue, volume).",
        discussion: """
            Takes a snapshot of each device (app, media with its metadata and tracks, position, queue and \
            repeat mode, paused or playing, volume and mute), plays MEDIA in the default receiver at --volume \
            until it finishes (--max-duration S cuts it short), then restores the snapshot. A device that was idle \
            is left idle. What cannot come back (an app that does not say what it plays, DRM, a live stream \
            rejoined at its live edge) is said with the reason, and the exit code is 5; the volume always \
            comes back. Several devices (--device 'Kitchen*') are announced to at once; each restores itself.
            --no-wait (through the daemon) returns once the announcement is under way.
            """ + "\n" + CastlineExit.summary)

    @Argument(help: "An http(s) URL or a local file (a chime, a message).") var media: String
    @OptionGroup var options: ControlOptions
    @Option(name: .long, help: "The device volume during the announcement, in percent (default: as it is).") var volume: Int?
    @Option(name: .long, help: "Content type, e.g. audio/mpeg (default: from the media-formats plugin).") var contentType: String?
    @Option(name: .long, help: "Seconds the announcement may play before it is cut short.") var maxDuration: Double = 120
    @Flag(inversion: .prefixedNo, help: "Wait until each device is restored; --no-wait returns once it plays (daemon only).")
    var wait = true

    func run() async throws {
        var resolved = media
        if !media.lowercased().hasPrefix("http://"), !media.lowercased().hasPrefix("https://") {
            do { resolved = try LocalMediaFile.open(media).path } catch {
                printError("castline announce: \(media): \(error) (expected an http(s) URL or a readable file)")
                throw CastlineExit.usage
            }
        }
        var arguments = AnnounceArguments(media: resolved)
        arguments.volume = volume
        arguments.contentType = contentType
        arguments.timeout = maxDuration
        do { _ = try AnnounceArguments(json: arguments.json) } catch { throw CommandOutput.exit(error) }
        let target = try options.target(featureKinds: [.mediaFormat])
        // In this process the restore cannot outlive the command: it always waits.
        arguments.wait = wait || target is LocalHub
        let partial = Mutex<[String]>([])
        do {
            _ = try await target.run(action: "announce", body: arguments.json, device: options.device.device, json: options.json) { device, answer in
                if answer["restored"] != nil, answer["restored"] != .bool(true) { partial.withLock { $0.append(device) } }
                return answer
            }
        } catch {
            await target.close()
            throw error
        }
        await target.close()
        if !partial.withLock({ $0 }).isEmpty { throw CastlineExit.notRestored }
    }
}
