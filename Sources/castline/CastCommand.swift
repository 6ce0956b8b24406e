import CastlineJobs
import CastlineDaemon
import ArgumentParser
import CastCore
import CastLogging
import CastlineLocalMedia
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
            A web page is not media: --site (or a URL the server says is text/html) shows it with DashCast, \
            as `castline site` does, and the output says so.
            """ + "\n" + CastlineExit.summary)

    @Argument(help: "An http(s) URL, a local file, a folder of media files, or an M3U playlist.")
    var media: String
    @Argument(help: "More items: played after the first, as one queue.")
    var more: [String] = []
    @Option(name: .customLong("repeat"), help: "A queue's repeat mode: off, all, single or shuffle.") var repeatMode: String?
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
    @Flag(name: .long, help: "Show the URL as a web page with DashCast (as `castline site URL`).") var site = false
    @Option(name: .long, help: "Subtitles for a local file: an SRT, ASS/SSA or WebVTT file, or auto (movie.srt / movie.<lang>.srt next to it, else the file's text tracks); sent as WebVTT.") var subtitles: String?
    @Flag(name: .long, help: "Print what would be loaded and how (play as is, remux, transcode, or refuse, with why); load nothing.") var dryRun = false
    @Flag(name: .long, help: "A video wall: start on every device --device names at one instant and keep them together (docs/sync.md).") var sync = false
    @Option(name: .long, help: "With --sync: make N measured starts to learn each TV's start latency, then stop.") var calibrate: Int?
    @Option(name: .long, help: "With --sync: the wall's name (default: the devices).") var wall: String?

    func validate() throws {
        if calibrate != nil || wall != nil, !sync { throw ValidationError("--calibrate and --wall go with --sync") }
        if let calibrate, !(1...20).contains(calibrate) { throw ValidationError("--calibrate must be 1-20 starts") }
        if sync, dryRun || site || noAutoplay || subtitles != nil || app != nil {
            throw ValidationError("--sync plays the media in the default receiver, with none of --dry-run, --site, --no-autoplay, --subtitles, --app")
        }
        if let streamType, StreamType.named(streamType) == nil { throw ValidationError("--stream-type must be buffered, live or none") }
        if let start, !(start >= 0 && start.isFinite) { throw ValidationError("--start must be 0 or more seconds") }
        guard playTimeout >= 1, playTimeout <= 3600 else { throw ValidationError("--play-timeout must be 1-3600 seconds") }
        guard (0...65535).contains(servePort) else { throw ValidationError("--serve-port must be 0-65535") }
        if let app, app.isEmpty || !app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            throw ValidationError("--app must be an app id such as CC1AD845")
        }
    }

    var isURL: Bool { Self.isURL(media) && more.allSatisfy(Self.isURL) }

    static func isURL(_ text: String) -> Bool { text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://") }

    /// A local item as the hub takes it: an absolute path (a folder or an M3U file as it is).
    static func resolve(_ item: String) throws -> String {
        if isURL(item) { return item }
        if let real = realpath(item, nil) {
            defer { free(real) }
            let path = String(cString: real)
            if Playlist.isPlaylistPath(path) { return path }
        }
        return try LocalMediaFile.open(item).path
    }

    /// The request body the API takes for this cast (`media` resolved to an absolute path for a file).
    func arguments(media resolved: String, queue: [String] = []) -> CastArguments {
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
        arguments.queue = queue
        arguments.repeatMode = repeatMode
        arguments.dryRun = dryRun
        if let subtitles { arguments.subtitles = subtitles == "auto" ? "auto" : (try? LocalMediaFile.open(subtitles).path) ?? subtitles }
        return arguments
    }

    func run() async throws {
        if site {
            guard isURL else {
                printError("castline cast: --site needs an http(s) URL (the TV fetches the page), not \(media)")
                throw CastlineExit.usage
            }
            let target = try options.target(featureKinds: [.channel])
            do {
                _ = try await target.run(action: "site", body: ["url": .string(media)], device: options.device.device, json: options.json)
            } catch {
                await target.close()
                throw error
            }
            await target.close()
            return
        }
        if sync { return try await startWall() }
        if let repeatMode, !["off", "all", "single", "shuffle"].contains(repeatMode) {
            printError("castline cast: --repeat must be off, all, single or shuffle, not \(repeatMode)")
            throw CastlineExit.usage
        }
        var resolved = media
        var queue: [String] = []
        do {
            resolved = try Self.resolve(media)
            queue = try more.map(Self.resolve)
        } catch {
            printError("castline cast: \(error) (expected http(s) URLs, readable files, folders or M3U files)")
            throw CastlineExit.usage
        }
        // A fixed serving port is this process's own: the cast runs here, not in the daemon.
        let target: any ControlTarget
        if servePort == 0 {
            target = try options.target(featureKinds: [.mediaFormat, .channel])
        } else {
            target = LocalHub(environment: try CommandEnvironment(options: options.device.request, featureKinds: [.mediaFormat, .channel]),
                              servePort: servePort)
        }
        do {
            try await cast(resolved, queue: queue, on: target)
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }

    /// Casts on every device `--device` names; then, with --follow, prints the changes until the
    /// media ends. A file served from this process (not the daemon) is served until its media
    /// ends there, or SIGINT/SIGTERM, which stops that media.
    private func cast(_ resolved: String, queue: [String], on target: any ControlTarget) async throws {
        SignalWaiter.block([SIGINT, SIGTERM])
        let servedHere = !isURL && target is LocalHub
        var failure: Error?
        var playing: [String] = []
        do {
            playing = try await target.run(action: "cast", body: arguments(media: resolved, queue: queue).json, device: options.device.device, json: options.json)
        } catch {
            failure = error
            if let exit = error as? ExitCode, exit.rawValue == CastlineExit.usage.rawValue { throw error }
        }
        if (follow || servedHere), !playing.isEmpty {
            let endings = await withTaskGroup(of: DeviceFollower.Ending?.self) { group in
                for device in playing {
                    group.addTask {
                        try? await DeviceFollower(target: target, device: device, json: options.json, view: false)
                            .follow(untilIdle: true, printing: follow)
                    }
                }
                var endings: [DeviceFollower.Ending?] = []
                for await ending in group { endings.append(ending) }
                return endings
            }
            if servedHere, endings.contains(where: { $0 == .signal }) {
                for device in playing { _ = await target.act(device, action: "stop", body: nil) }
            }
        }
        if let failure { throw failure }
    }

    /// `--sync`: one wall over every device `--device` names (`POST /v1/sync`). Through the
    /// daemon the wall lives on there; in this process (no daemon, or --direct) castline keeps
    /// the TVs together until the playlist ends or SIGINT/SIGTERM.
    private func startWall() async throws {
        let items = [media] + more
        guard items.allSatisfy(Self.isURL) else {
            printError("castline cast --sync: a wall's TVs fetch the media themselves: give http(s) URLs, not files")
            throw CastlineExit.usage
        }
        if let repeatMode, repeatMode != "off", repeatMode != "all" {
            printError("castline cast --sync: --repeat must be off or all for a wall")
            throw CastlineExit.usage
        }
        SignalWaiter.block([SIGINT, SIGTERM])
        let target = try options.target(featureKinds: [.mediaFormat])
        do {
            let devices = try await target.devices(options.device.device)
            var body: JSONObject = ["devices": .array(devices.map { .string($0) }), "media": .array(items.map { .string($0) })]
            if let contentType { body.set("content_type", .string(contentType)) }
            if let title { body.set("title", .string(title)) }
            if let start { body.set("start", .double(start)) }
            if repeatMode == "all" { body.set("repeat", true) }
            if let name = wall ?? options.device.device { body.set("name", .string(name)) }
            if let calibrate { body.set("calibrate", .int(Int64(calibrate))) }
            let answer: JSONValue
            switch await target.hub("POST", "/v1/sync", body: .object(body)) {
            case .success(let json): answer = json
            case .failure(let error):
                throw CommandOutput.exit(error)
            }
            CommandOutput.print(answer, json: options.json)
            if target is LocalHub, calibrate == nil, let name = answer["wall"]?.string {
                // The wall lives in this process: hold it until it ends or a signal.
                let (ended, done) = AsyncStream<Void>.makeStream()
                let signal = Task {
                    _ = await SignalWaiter.wait([SIGINT, SIGTERM])
                    done.yield()
                }
                let poll = Task {
                    // Bounded: one look a second, for at most a year.
                    for _ in 0..<(86_400 * 366) {
                        if case .success(let walls) = await target.hub("GET", "/v1/sync", body: nil),
                           walls["walls"]?.array?.first(where: { $0["wall"]?.string == name })?["state"]?.string != "running" { break }
                        try? await Task.sleep(nanoseconds: 1_000_000_000)
                        if Task.isCancelled { return }
                    }
                    done.yield()
                }
                for await _ in ended { break }
                poll.cancel()
                signal.cancel()
                _ = await target.hub("DELETE", "/v1/sync/" + DaemonClient.percentEncoded(name), body: nil)
            }
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }
}
