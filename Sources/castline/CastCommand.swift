import CastlineDaemon
import ArgumentParser
import CastCore
import CastLogging
import CastMediaServer
import CastPluginHost
import CastProtocol
import CastSender
import Glibc

/// `castline cast <url|file> --device X`: load media on one or more devices and wait until it plays.
struct CastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast",
        abstract: "Cast a URL or a local file to a device and wait until it plays.",
        discussion: """
            Launches (or joins) the receiver app (--app, config receiver_app_id, default CC1AD845), loads the \
            media and waits until the device reports PLAYING (PAUSED with --no-autoplay), then prints the status \
            and exits, leaving the cast running. Content type and stream type come from --content-type and \
            --stream-type, else from the media-formats plugin (extension, HLS/DASH manifests, 4K/HDR info).
            A local file is served by a built-in HTTP server (Range requests, an unguessable URL) on the \
            address that faces the device; castline then keeps running until playback ends or SIGINT/SIGTERM, \
            which stops the media (the file stops being served). --follow keeps printing status changes \
            (JSON lines with --json) until the media ends, the session ends, or a signal.
            """ + "\n" + CastlineExit.summary)

    @Argument(help: "An http(s) URL or a local file.")
    var media: String
    @OptionGroup var options: ControlOptions
    @Option(name: .long, help: "Title shown on the receiver.") var title: String?
    @Option(name: .long, help: "Subtitle shown on the receiver.") var subtitle: String?
    @Option(name: .long, help: "Studio (movie metadata).") var studio: String?
    @Option(name: .long, help: "An image URL for the receiver's artwork.") var image: String?
    @Option(name: .long, help: "Content type, e.g. video/mp4 (default: from the media-formats plugin).") var contentType: String?
    @Option(name: .long, help: "buffered, live or none (default: from the media-formats plugin, else buffered).") var streamType: String?
    @Option(name: .long, help: "Receiver app id (default: config receiver_app_id, CC1AD845).") var app: String?
    @Option(name: .long, help: "Start position in seconds.") var start: Double?
    @Flag(name: .long, help: "Load paused.") var noAutoplay = false
    @Flag(name: .long, help: "Keep running and print status changes until the media ends.") var follow = false
    @Option(name: .long, help: "Seconds to wait for PLAYING after the load.") var playTimeout: Double = 30
    @Option(name: .long, help: "Port for the built-in file server (0: any free port).") var servePort: Int = 0

    func validate() throws {
        if let streamType, StreamType.named(streamType) == nil { throw ValidationError("--stream-type must be buffered, live or none") }
        if let start, !(start >= 0 && start.isFinite) { throw ValidationError("--start must be 0 or more seconds") }
        guard playTimeout >= 1, playTimeout <= 3600 else { throw ValidationError("--play-timeout must be 1-3600 seconds") }
        guard (0...65535).contains(servePort) else { throw ValidationError("--serve-port must be 0-65535") }
        if let app, app.isEmpty || !app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw ValidationError("--app must be an app id such as CC1AD845")
        }
    }

    var isURL: Bool { media.lowercased().hasPrefix("http://") || media.lowercased().hasPrefix("https://") }

    /// The request body the API takes for this cast (`media` resolved to an absolute path for a file).
    func arguments(media resolved: String) -> CastArguments {
        var arguments = CastArguments(media: resolved)
        arguments.title = title
        arguments.subtitle = subtitle
        arguments.studio = studio
        arguments.image = image
        arguments.contentType = contentType
        arguments.streamType = streamType.flatMap(StreamType.named)
        arguments.app = app
        arguments.start = start
        arguments.noAutoplay = noAutoplay
        arguments.playTimeout = playTimeout
        return arguments
    }

    func run() async throws {
        if let daemon = options.daemon, servePort == 0 {
            var resolved = media
            if !isURL {
                do { resolved = try LocalMediaFile.open(media).path } catch {
                    printError("castline cast: \(media): \(error) (expected an http(s) URL or a readable file)")
                    throw CastlineExit.usage
                }
            }
            try daemon.run(action: "cast", body: arguments(media: resolved).json, device: options.device.device, json: options.json)
            if follow { try await DaemonFollow.untilIdle(daemon, device: options.device.device ?? "", json: options.json) }
            return
        }
        SignalWaiter.block([SIGINT, SIGTERM])
        var file: LocalMediaFile?
        if !isURL {
            do { file = try LocalMediaFile.open(media) } catch {
                printError("castline cast: \(media): \(error) (expected an http(s) URL or a readable file)")
                throw CastlineExit.usage
            }
        }
        let environment = try CommandEnvironment(options: options.device.request, featureKinds: [.mediaFormat])
        do {
            try await cast(file: file, environment: environment)
        } catch {
            await environment.shutdown()
            throw error
        }
        await environment.shutdown()
    }

    private func cast(file: LocalMediaFile?, environment: CommandEnvironment) async throws {
        let log = Logger(class: "CastCommand", system: environment.logSystem)
        let devices = try await environment.resolveDevices()
        let probed = probe(file: file, environment: environment)
        let format = try? probed.get()
        guard let type = contentType ?? format?.contentType else {
            // Why matters: a missing plugin (a binary copied without its plugins) reads like a
            // bad file name otherwise.
            let reason = if case .failure(let error) = probed { ": \(error). `castline plugins` lists what is loaded" } else { "" }
            printError("castline cast: cannot tell the content type of \(media)\(reason). Give --content-type (e.g. video/mp4)")
            throw CastlineExit.usage
        }
        // Local files: one server per local address that faces a device.
        var servers: [String: MediaFileServer] = [:]
        var urls: [String: String] = [:]
        if let file {
            for device in devices {
                let address: String
                do { address = try FacingAddress.localAddress(facing: device.host, port: device.port) } catch {
                    printError("castline cast: no local address reaches \(device.friendlyName) (\(device.host)): \(error)")
                    for server in servers.values { await server.stop() }
                    throw CastlineExit.failure
                }
                if servers[address] == nil {
                    do {
                        servers[address] = try await MediaFileServer.start(file: ServedFile(path: file.path, contentType: type), host: address,
                                                                           port: servePort, group: environment.group, logSystem: environment.logSystem)
                    } catch {
                        printError("castline cast: cannot serve \(file.path) on \(address):\(servePort): \(error)")
                        for server in servers.values { await server.stop() }
                        throw CastlineExit.failure
                    }
                }
                urls[device.id] = servers[address]!.url(for: file.name)
            }
        }
        let manager = SessionManager(options: environment.castOptions(policy: .joinOrLaunch, appID: app), group: environment.group)
        let outcomes = await withTaskGroup(of: (Int, CastOutcome).self) { group in
            for (index, device) in devices.enumerated() {
                let url = urls[device.id] ?? media
                let info = buildMedia(url: url, contentType: type, format: format)
                group.addTask { (index, await self.castOne(device: device, media: info, manager: manager, log: log)) }
            }
            var results: [(Int, CastOutcome)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var exit: ExitCode?
        var playing: [CastSession] = []
        for (device, outcome) in zip(devices, outcomes) {
            switch outcome {
            case .playing(let session, let snapshot):
                playing.append(session)
                if options.json {
                    var json = snapshot.json(at: MonotonicClock.seconds())
                    if case .object(var o) = json, let url = urls[device.id] {
                        o.set("servedURL", .string(url))
                        json = .object(o)
                    }
                    printLine(json.serialized())
                } else {
                    printLine(DeviceRunner.oneLine(snapshot))
                }
            case .refused(let why):
                printError("castline cast: \(device.friendlyName): \(why)")
                if exit == nil { exit = CastlineExit.refused }
            case .failed(let why):
                printError("castline cast: \(device.friendlyName): \(why)")
                exit = CastlineExit.failure
            }
        }
        if (follow || file != nil) && !playing.isEmpty {
            let interrupted = await watch(playing)
            if interrupted && file != nil {
                for session in playing { _ = await session.remoteMediaClient.stop().result }
            }
        }
        await manager.shutdown(stopCasting: false)
        for server in servers.values { await server.stop() }
        if let exit { throw exit }
    }

    enum CastOutcome: Sendable {
        case playing(CastSession, StatusSnapshot)
        case refused(String)
        case failed(String)
    }

    func buildMedia(url: String, contentType: String, format: MediaFormatInfo?) -> MediaInformation {
        arguments(media: media).mediaInformation(url: url, contentType: contentType, format: format)
    }

    /// What the media-format plugins say of the media (content type, stream type, 4K/HDR), or
    /// why they could not say (logged at debug).
    func probe(file: LocalMediaFile?, environment: CommandEnvironment) -> Result<MediaFormatInfo, MediaFormatProbeError> {
        let result = environment.plugins.probeMediaFormat(url: file?.path ?? media, contentType: contentType, body: file?.head)
        if case .failure(let error) = result {
            Logger(class: "CastCommand", system: environment.logSystem).debug("no media format: \(error)")
        }
        return result
    }

    func castOne(device: CastDevice, media info: MediaInformation, manager: SessionManager, log: Logger) async -> CastOutcome {
        let started = MonotonicClock.seconds()
        let session: CastSession
        do { session = try await manager.startSession(on: device) } catch {
            if case .requestFailed(_, .launchError) = error { return .refused("\(error)") }
            return .failed("\(error)")
        }
        let wanted: PlayerState = noAutoplay ? .paused : .playing
        switch await session.remoteMediaClient.loadAndWait(info, options: MediaLoadOptions(autoplay: !noAutoplay, startTime: start),
                                                           until: wanted, timeout: playTimeout) {
        case .success: break
        case .failure(let error): return error.isRefusal ? .refused("\(error)") : .failed("\(error)")
        }
        let milliseconds = Int((MonotonicClock.seconds() - started) * 1000)
        log.info("\(device.friendlyName): \(wanted.rawValue) in \(milliseconds) ms", [
            "device": .string(device.id), "durationMs": .int(milliseconds), "contentType": .string(info.contentType),
        ])
        return .playing(session, await DeviceRunner.snapshot(of: session))
    }

    /// Prints status changes until every session's media ends or the session ends; true when a
    /// signal ended the watch.
    func watch(_ sessions: [CastSession]) async -> Bool {
        let (events, continuation) = AsyncStream<(Int, MediaStatus?)?>.makeStream()
        var tasks: [Task<Void, Never>] = []
        for (index, session) in sessions.enumerated() {
            let updates = session.remoteMediaClient.statusUpdates()
            tasks.append(Task {
                for await status in updates { continuation.yield((index, status)) }
            })
        }
        tasks.append(Task {
            _ = await SignalWaiter.wait([SIGINT, SIGTERM])
            continuation.yield(nil)
        })
        tasks.append(Task {
            // Session ends (app stopped elsewhere, connection given up) are polled: bounded, 1 s.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield((-1, nil))
            }
        })
        var finished = Set<Int>()
        var interrupted = false
        for await event in events {
            guard let (index, status) = event else {
                interrupted = true
                break
            }
            if index >= 0 {
                let snapshot = await DeviceRunner.snapshot(of: sessions[index])
                if follow {
                    if options.json { printLine(snapshot.json(at: MonotonicClock.seconds()).serialized()) } else { printLine(DeviceRunner.oneLine(snapshot)) }
                }
                if let status, status.playerState == .idle, status.idleReason != nil { finished.insert(index) }
            }
            for (i, session) in sessions.enumerated() where await session.state.isFinal { finished.insert(i) }
            if finished.count == sessions.count { break }
        }
        for task in tasks { task.cancel() }
        return interrupted
    }
}
