import CastlineJobs
import CastCore
import CastHTTP
import CastLogging
import CastProtocol
import CastlineLocalMedia
import CastSender
import CastlineConfig
import CastlineSync
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The one way into a running castline: every ``ControlCommand`` (from the HTTP API, the CLI or
/// MQTT) is carried out here, on the hub's devices and jobs, and answered with JSON or a
/// ``ControlError``. Isolation: an actor (it keeps the files it serves for commands' casts).
package actor ControlPlane {
    package nonisolated let daemon: Daemon
    let registry: DeviceRegistry
    let logSystem: LogSystem
    let group: EventLoopGroup
    let log: Logger
    let receiverAppID: String
    let allowedNamespaces: Set<String>
    /// The config's `media:` (hardware encoding for transcodes).
    let mediaSettings: MediaSettings
    let probe: MediaProbe?
    /// The channel plugins opened on devices (the daemon's, shared with the jobs).
    var pluginChannels: PluginChannels { daemon.pluginChannels }
    /// Where commands' local files are served from, and which may be (`media.roots`).
    var media: MediaPublisher { daemon.media }
    /// ffmpeg children remuxing or transcoding commands' files, by device (ControlPlane+Media).
    var transcodes: [String: MediaTranscode] = [:]
    /// WebVTT subtitles converted for commands' casts, by device (a folder each).
    var subtitleFolders: [String: String] = [:]
    /// Commands that change what a device shows, one at a time per device, the last one winning.
    var lanes = DeviceCommandLanes()
    /// The running command's place in its device's lane (nil: a command that changes no device).
    @TaskLocal static var ticket: DeviceCommandLanes.Ticket?

    static func changesDevice(_ command: ControlCommand) -> Bool {
        switch command {
        case .cast, .site, .stop, .queue: return true
        // An announcement that answers at once only starts the one that waits (which takes a place).
        case .announce(_, let arguments): return arguments.wait
        default: return false
        }
    }

    /// Video walls being held together, by name (ControlPlane+Sync).
    var walls: [String: VideoWall] = [:]

    /// Generic channels open on devices, by device and namespace (plugins' are in ``PluginChannels``).
    var channels: [String: [String: GenericChannel]] = [:]

    /// What the media-format plugins say of a URL or file head (content type, stream type, 4K/HDR).
    package typealias MediaProbe = @Sendable (_ media: String, _ contentType: String?, _ head: [UInt8]?) -> Result<MediaFormatInfo, any Error>

    package init(daemon: Daemon, config: CastlineConfiguration, logSystem: LogSystem, group: EventLoopGroup, probe: MediaProbe? = nil) {
        self.daemon = daemon
        registry = daemon.registry
        self.logSystem = logSystem
        self.group = group
        self.probe = probe
        receiverAppID = config.receiverAppID
        allowedNamespaces = config.channels.permitted
        mediaSettings = config.media
        log = Logger(class: "ControlPlane", system: logSystem)
    }

    /// Carries out `command`. One that changes what a device shows waits for the device's lane
    /// (``DeviceCommandLanes``): a newer command to the same device supersedes it.
    package func execute(_ command: ControlCommand) async -> Result<JSONValue, ControlError> {
        guard Self.changesDevice(command), let reference = command.device,
              let device = try? await registry.resolve(reference).device else { return await runReporting(command) }
        let ticket = lanes.issue(device.id)
        if !lanes.tryStart(ticket) {
            let turn = await withCheckedContinuation { lanes.wait(ticket, $0) }
            guard turn else { return superseded(command, device) }
        }
        let result = await Self.$ticket.withValue(ticket) { await runReporting(command) }
        lanes.leave(ticket)
        // Done, but a newer command arrived meanwhile: it replaces what this one showed.
        if case .success = result, lanes.isSuperseded(ticket) { return superseded(command, device) }
        return result
    }

    private func superseded(_ command: ControlCommand, _ device: CastDevice) -> Result<JSONValue, ControlError> {
        log.info("\(Self.name(command)) to \(device.friendlyName) superseded by a newer command", [
            "command": .string(Self.name(command)), "device": .string(device.id),
        ])
        return .failure(DeviceCommandLanes.superseded(device.friendlyName))
    }

    private func runReporting(_ command: ControlCommand) async -> Result<JSONValue, ControlError> {
        do throws(ControlError) {
            return .success(try await run(command))
        } catch {
            if error.code == "superseded" {
                log.info("\(Self.name(command)): \(error.message)", ["command": .string(Self.name(command)), "error": .string(error.code)])
            } else if error.kind != .notFound, error.kind != .usage {
                log.warning("\(Self.name(command)) failed: \(error)", ["command": .string(Self.name(command)), "error": .string(error.code)])
            }
            return .failure(error)
        }
    }

    /// Throws 409 `superseded` when a newer command to the device arrived: called before each
    /// step that reaches the device (LAUNCH, LOAD, STOP), so an overtaken command sends no more.
    func checkTurn(_ device: CastDevice) throws(ControlError) {
        try lanes.check(Self.ticket, deviceName: device.friendlyName)
    }

    func run(_ command: ControlCommand) async throws(ControlError) -> JSONValue {
        switch command {
        case .status: return await status()
        case .listDevices: return await devices()
        case .showDevice(let reference): return try await device(reference)
        case .cast(let reference, let arguments): return try await cast(reference, arguments)
        case .play(let reference): return try await media(reference, "PLAY") { await $0.remoteMediaClient.play() }
        case .pause(let reference): return try await media(reference, "PAUSE") { await $0.remoteMediaClient.pause() }
        case .stop(let reference, let app): return try await stop(reference, app: app)
        case .seek(let reference, let seek):
            if !seek.relative { await awaitTranscoded(reference, to: seek.seconds) }
            return try await media(reference, "SEEK") { link in
                seek.relative ? await link.remoteMediaClient.seek(by: seek.seconds) : await link.remoteMediaClient.seek(to: seek.seconds)
            }
        case .volume(let reference, let volume, let stream): return try await setVolume(reference, volume, stream: stream)
        case .mute(let reference, let muted, let stream): return try await setMuted(reference, muted, stream: stream)
        case .queue(let reference, let action): return try await queue(reference, action)
        case .channel(let reference, let namespace, let arguments): return try await channel(reference, namespace: namespace, arguments)
        case .site(let reference, let site): return try await self.site(reference, site)
        case .announce(let reference, let arguments): return try await announce(reference, arguments)
        case .sync(let arguments): return try await sync(arguments)
        case .listWalls: return await listWalls()
        case .stopWall(let name): return try await stopWall(name)
        case .listPlugins: return ["plugins": .array(pluginChannels.plugins?.states().map(\.json) ?? [])]
        case .listJobs: return await daemon.jobsJSON()
        case .showJob(let name):
            guard let job = await daemon.jobJSON(named: name) else { throw ControlError(.notFound, "unknown_job", "no job \"\(name)\"") }
            return job
        case .putJob(let name, let text):
            let job: JobEntry
            do { job = try JobEntry.parse(text, source: "request body", name: name) } catch {
                throw ControlError.usage("bad_job", error.diagnostics.map(\.description).joined(separator: "\n"))
            }
            let (json, created) = try await daemon.putJob(job)
            if case .object(var object) = json {
                object.set("created", .bool(created))
                return .object(object)
            }
            return json
        case .deleteJob(let name):
            try await daemon.deleteJob(name)
            return ["deleted": .string(name)]
        case .runJob(let name, let wait): return try await runJob(name, wait: wait)
        case .showLogging: return await logging()
        case .setLogging(let rules):
            try await daemon.setAPILogRules(rules)
            return await logging()
        case .explainLogging(let className, let function): return try await explain(className, function: function)
        }
    }

    /// The command's name in logs: its row's in the route table.
    static func name(_ command: ControlCommand) -> String { command.action.name }

    // MARK: Devices

    func status() async -> JSONValue {
        let uptime = MonotonicClock.seconds() - daemon.startedAt
        return ["version": .string(CastlineVersion.string), "pid": .int(Int64(getpid())), "uptime": .double((uptime * 10).rounded() / 10),
                "devices": .int(Int64(await registry.all.count)), "jobs": .string(await daemon.statusLine())]
    }

    func devices() async -> JSONValue {
        let now = MonotonicClock.seconds()
        return ["devices": .array(await registry.listing(now: now))]
    }

    func device(_ reference: String) async throws(ControlError) -> JSONValue {
        await result(try await registry.resolve(reference))
    }

    /// The device's object as its link reports it now (after a command: what the device answered).
    func result(_ entry: DeviceRegistry.Entry) async -> JSONValue {
        let now = MonotonicClock.seconds()
        var json: JSONValue
        if let snapshot = await registry.currentSnapshot(entry.device.id, now: now) {
            json = snapshot.json(at: now)
        } else {
            json = await registry.snapshot(entry, now: now).json(at: now)
        }
        // The ffmpeg child's progress: media written against the device's position.
        if let transcode = transcodes[entry.device.id], case .object(var object) = json {
            object.set("transcode", transcode.json)
            json = .object(object)
        }
        return json
    }

    // MARK: Casting

    func cast(_ reference: String, _ arguments: CastArguments) async throws(ControlError) -> JSONValue {
        let (entry, link) = try await registry.link(reference)
        let device = entry.device
        if arguments.isQueue { return try await castQueue(entry, link, arguments) }
        let url: String, type: String, format: MediaFormatInfo?, tracks: [MediaTrack]
        switch try await mediaSource(arguments, device: device) {
        case .webPage(let page): return try await webPage(reference, arguments, type: page)
        case .dryRun(let report): return report
        case .media(let u, let t, let f, let k): (url, type, format, tracks) = (u, t, f, k)
        }
        let appID = arguments.app ?? receiverAppID
        try checkTurn(device)
        let app = try await Self.launch(appID, on: link, device: device)
        // An app that declares namespaces but not the media one (DashCast, a dashboard) never
        // answers a LOAD: say so now instead of after the play timeout.
        if !app.namespaces.isEmpty, !app.namespaces.contains(.media) {
            throw ControlError(.refused, "app_without_media", "\(device.friendlyName): app \(appID)"
                               + (app.displayName.isEmpty ? "" : " (\(app.displayName))") + " does not play media (it has no \(CastNamespace.media.rawValue) namespace)")
        }
        try checkTurn(device)
        await registry.claim(device.id, owner: CommandOwner.name, contentID: url)
        let wanted: PlayerState = arguments.noAutoplay ? .paused : .playing
        var media = arguments.mediaInformation(url: url, contentType: type, format: format)
        if !tracks.isEmpty { media.tracks = tracks }
        let active = tracks.first.map { [$0.trackID] }
        // A transcode starting at `start` already begins there.
        let start = transcodes[device.id] != nil ? nil : arguments.start
        switch await link.remoteMediaClient.loadAndWait(media, options: MediaLoadOptions(autoplay: !arguments.noAutoplay, startTime: start, activeTrackIDs: active),
                                                        until: wanted, timeout: arguments.playTimeout) {
        case .success:
            log.info("\(device.friendlyName): \(wanted.rawValue) \(arguments.media)", ["device": .string(device.id), "url": .string(url)])
        case .failure(let error):
            await registry.release(device.id, owner: CommandOwner.name)
            self.media.revoke(device.id, owner: CommandOwner.name)
            throw Self.loadError(error, device: device)
        }
        var json = await result(entry)
        if url != arguments.media, case .object(var object) = json {
            // The file's name, never the URL: its token is the device's alone.
            object.set("served", .string(ServedMediaNames.shared.redact(url)))
            if let transcode = transcodes[device.id] { object.set("transcode", transcode.json) }
            json = .object(object)
        }
        return json
    }

    /// What a cast's media is: a URL (a local file served to the device) with its content type
    /// and the media-format probe's findings, or a web page (for the site route).
    enum MediaSource {
        case media(url: String, type: String, format: MediaFormatInfo?, tracks: [MediaTrack] = [])
        case webPage(type: String)
        /// `dry_run`: what would happen (``ControlPlane/dryRun(_:device:type:format:plan:)``).
        case dryRun(JSONValue)
    }

    /// Resolves `arguments.media`: its type from the arguments, the media-format plugins, the
    /// extension for a web page, or the server's Content-Type; a file is served to `device`.
    func mediaSource(_ arguments: CastArguments, device: CastDevice) async throws(ControlError) -> MediaSource {
        var head: [UInt8]?
        var local: (path: String, root: String?)?
        if arguments.media.hasPrefix("/") {
            let file: LocalMediaFile
            let policy = arguments.localMedia ?? media.policy
            local = try ControlError.localMedia { () throws(LocalMediaError) in try policy.resolve(arguments.media) }
            do { file = try LocalMediaFile.open(local!.path) } catch {
                throw ControlError.usage("unreadable_file", "castline cannot read \(arguments.media): \(error) (cast with --direct to serve it from your own process)")
            }
            head = file.head
        } else {
            head = await urlHead(arguments.media, contentType: arguments.contentType)
        }
        let probed = probe.map { $0(arguments.media, arguments.contentType, head) }
        let format = try? probed?.get()
        var known = arguments.contentType ?? format?.contentType
        if known == nil, let guess = ContentTypeGuess.forPath(arguments.media), SitePreflight.isWebPage(guess) { known = guess }
        if known == nil, HTTPURL(arguments.media) != nil {
            // The server's Content-Type, when nothing else tells.
            known = try? await SitePreflight.check(arguments.media, group: group).contentType
        }
        if arguments.app == nil, let known, SitePreflight.isWebPage(known) {
            guard !arguments.media.hasPrefix("/") else {
                throw ControlError.usage("local_web_page", "\(arguments.media) is a web page: a TV fetches a page (and what it links to) itself. "
                                         + "Serve its folder over http(s) (python3 -m http.server) and use `castline site http://HOST:PORT/\(JobMedia.fileName(arguments.media))`")
            }
            return .webPage(type: known)
        }
        if local != nil, let head { try Self.checkIsMedia(arguments.media, head: head, format: format) }
        guard let type = known else {
            // Why matters: a missing plugin (a binary copied without its plugins) reads like a
            // bad file name otherwise.
            let reason = if case .failure(let error)? = probed { ": \(error). `castline plugins` lists what is loaded" } else { "" }
            throw ControlError.usage("unknown_content_type", "cannot tell the content type of \(arguments.media)\(reason). "
                                     + "Give --content-type (content_type in the API), e.g. video/mp4")
        }
        let plan = Self.plan(format, for: device)
        if arguments.dryRun { return .dryRun(dryRun(arguments, device: device, type: type, format: format, plan: plan)) }
        if let plan, plan.action == .refuse {
            throw ControlError(.refused, "unplayable_media", "\(device.friendlyName): \(plan.summary)")
        }
        guard let local else { return .media(url: arguments.media, type: type, format: format) }
        await stopTranscode(device.id)
        let subtitles = try await prepareSubtitles(arguments.subtitles, media: local.path, format: format, device: device)
        let extra = Dictionary(subtitles.map { ($0.name, $0.file) }) { a, _ in a }
        let url: String, servedType: String, servedFormat: MediaFormatInfo?, server: MediaPublication
        if let plan, let format, plan.action == .remux || plan.action == .transcode {
            log.info("\(device.friendlyName): \(plan.summary)", ["device": .string(device.id), "action": .string(plan.action.rawValue)])
            (url, servedType, servedFormat, server) = try await transcodeAndServe(local.path, plan: plan, format: format, device: device,
                                                                                  start: arguments.start, extra: extra)
        } else {
            let file = ServedFile(path: local.path, contentType: type, root: local.root)
            server = try await serve(files: extra.merging([file.fileName: file]) { _, b in b }, to: device)
            (url, servedType, servedFormat) = (server.url(for: file.fileName), type, format)
        }
        let tracks = SubtitleTracks.tracks(subtitles.map(\.source), urls: subtitles.map { server.url(for: $0.name) })
        return .media(url: url, type: servedType, format: servedFormat, tracks: tracks)
    }

    /// A web page given to `cast` goes to the site route: a media receiver cannot show HTML.
    func webPage(_ reference: String, _ arguments: CastArguments, type: String) async throws(ControlError) -> JSONValue {
        let shown = try await site(reference, .page(url: arguments.media, force: nil, reloadEvery: 0, check: true))
        guard case .object(var object) = shown else { return shown }
        object.set("routed", .string("\(arguments.media) is a web page (\(type)): shown with DashCast, as `castline site` does"))
        return .object(object)
    }

    /// Publishes `files` (published name → file) for `device` alone, replacing what the last
    /// command published for it.
    func serve(files: [String: ServedFile], to device: CastDevice) async throws(ControlError) -> MediaPublication {
        try await ControlError.localMedia { () async throws(LocalMediaError) in try await media.publish(files, to: device, owner: CommandOwner.name) }
    }

    /// Refuses a local file whose first bytes are no media container castline knows and in which
    /// the media-format plugins found no stream: text, keys and unknown files are never served,
    /// whatever content type the request claimed (415 `not_media`).
    static func checkIsMedia(_ path: String, head: [UInt8], format: MediaFormatInfo?) throws(ControlError) {
        guard MediaSniffer.container(of: head) == nil, format?.streams.isEmpty ?? true else { return }
        throw ControlError(.unsupportedMedia, "not_media", "\(path) is not a media file castline serves "
                           + "(its first bytes match no audio, video, image or playlist format a Cast device plays)")
    }

    /// Stops what serves commands' files (the daemon is stopping).
    package func shutdown() async {
        for wall in walls.values { await wall.stop("castline is stopping") }
        walls = [:]
        for id in Array(transcodes.keys) { await stopTranscode(id) }
        for folder in subtitleFolders.values { MediaTranscode.removeFolder(folder) }
        subtitleFolders = [:]
        await media.shutdown()
        channels = [:]
        await pluginChannels.closeAll()
    }

    // MARK: Media and device controls

    /// A media command on the app that runs (whoever cast it).
    func media(_ reference: String, _ type: String, _ request: (CastSession) async -> CastRequest<MediaStatus?>) async throws(ControlError) -> JSONValue {
        let (entry, link) = try await registry.link(reference)
        guard await link.application != nil else {
            throw ControlError(.conflict, "no_media_app", "\(entry.device.friendlyName): no app runs there (nothing to \(type.lowercased()))")
        }
        try Self.check(await request(link).result.map { _ in () }, type, device: entry.device)
        return await result(entry)
    }

    func stop(_ reference: String, app: Bool) async throws(ControlError) -> JSONValue {
        let (entry, link) = try await registry.link(reference)
        await stopTranscode(entry.device.id)
        self.media.revoke(entry.device.id, owner: CommandOwner.name)
        try checkTurn(entry.device)
        if app {
            do { try await link.stopApplication() } catch {
                throw ControlError(.unavailable, "stop_failed", "\(entry.device.friendlyName): \(error)")
            }
            return await result(entry)
        }
        guard link.remoteMediaClient.mediaStatus != nil else {
            throw ControlError(.conflict, "no_media", "\(entry.device.friendlyName): no media plays (use \"app\": true to stop the app)")
        }
        try Self.check(await link.remoteMediaClient.stop().result.map { _ in () }, "STOP", device: entry.device)
        return await result(entry)
    }

    func setVolume(_ reference: String, _ volume: ControlArguments.Volume, stream: Bool) async throws(ControlError) -> JSONValue {
        let (entry, link) = try await registry.link(reference)
        if stream {
            guard let current = link.remoteMediaClient.mediaStatus else {
                throw ControlError(.conflict, "no_media", "\(entry.device.friendlyName): no media plays (the stream volume needs one)")
            }
            let level = volume.level(from: current.volume?.level ?? 1)
            try Self.check(await link.remoteMediaClient.setStreamVolume(level).result.map { _ in () }, "SET_VOLUME", device: entry.device)
        } else {
            // The device volume needs no app: an idle device answers on the platform.
            let level = volume.level(from: await link.deviceStatus?.volumeLevel ?? 0)
            try Self.check(await link.setDeviceVolume(level).result.map { _ in () }, "SET_VOLUME", device: entry.device)
        }
        return await result(entry)
    }

    func setMuted(_ reference: String, _ muted: Bool, stream: Bool) async throws(ControlError) -> JSONValue {
        let (entry, link) = try await registry.link(reference)
        if stream {
            guard link.remoteMediaClient.mediaStatus != nil else {
                throw ControlError(.conflict, "no_media", "\(entry.device.friendlyName): no media plays (stream mute needs one)")
            }
            try Self.check(await link.remoteMediaClient.setStreamMuted(muted).result.map { _ in () }, "SET_VOLUME", device: entry.device)
        } else {
            try Self.check(await link.setDeviceMuted(muted).result.map { _ in () }, "SET_VOLUME", device: entry.device)
        }
        return await result(entry)
    }

    func queue(_ reference: String, _ action: ControlArguments.Queue) async throws(ControlError) -> JSONValue {
        try await media(reference, "QUEUE_UPDATE") { link in
            let client = link.remoteMediaClient
            switch action {
            case .next: return await client.queueNext()
            case .previous: return await client.queuePrevious()
            case .jump(let item): return await client.queueJump(toItemID: item)
            case .remove(let items): return await client.queueRemove(itemIDs: items)
            case .repeatMode(let mode): return await client.queueSetRepeatMode(mode)
            }
        }
    }

    /// Launches (or joins) `appID`, its failure in the API's words: no such app (404), the device
    /// refused (422), or it could not be asked (503). Every command that launches comes here.
    static func launch(_ appID: String, on link: CastSession, device: CastDevice, timeout: Double? = nil,
                       evenIfRunning: Bool = false) async throws(ControlError) -> ApplicationInfo {
        do {
            return try await link.launch(appID: appID, timeout: timeout, evenIfRunning: evenIfRunning)
        } catch {
            if case .requestFailed(_, .launchError(.notFound?)) = error {
                throw ControlError(.notFound, "app_not_found", "\(device.friendlyName) has no app \(appID)")
            }
            // The device cancelled it: another launch on the device (a job's, another sender's)
            // replaced it, or the device did so of its own (Nest Hubs while DashCast runs).
            if case .requestFailed(_, .launchError(.cancelled?)) = error {
                throw ControlError(.conflict, "superseded", "\(device.friendlyName): the device cancelled the launch (another launch, or its own doing): \(error)")
            }
            if case .requestFailed(_, .launchError) = error { throw ControlError(.refused, "launch_refused", "\(device.friendlyName): \(error)") }
            throw ControlError(.unavailable, "launch_failed", "\(device.friendlyName): cannot launch \(appID): \(error)")
        }
    }

    /// A LOAD's failure in the API's words: another load replaced it (409 `superseded`), the
    /// device refused the media (422 `load_refused`), or did not answer (503 `load_failed`).
    static func loadError(_ error: LoadWaitError, device: CastDevice) -> ControlError {
        switch error {
        case .refused(.superseded), .refused(.loadCancelled), .failed(.superseded):
            return ControlError(.conflict, "superseded", "\(device.friendlyName): another load on the device replaced this one (\(error))")
        default:
            return ControlError(error.isRefusal ? .refused : .unavailable, error.isRefusal ? "load_refused" : "load_failed",
                                "\(device.friendlyName): \(error)")
        }
    }

    /// A request's failure in the API's words: the device refused, or could not be reached.
    static func check(_ outcome: Result<Void, CastRequestError>, _ type: String, device: CastDevice) throws(ControlError) {
        guard case .failure(let error) = outcome else { return }
        switch error {
        case .timedOut, .disconnected, .cancelled:
            throw ControlError(.unavailable, "no_reply", "\(device.friendlyName): \(type): \(error)")
        case .invalidPlayerState, .invalidRequest(.invalidMediaSessionID?):
            throw ControlError(.conflict, "invalid_player_state", "\(device.friendlyName): \(type) does not apply in the player's state (\(error))")
        default:
            throw ControlError(.refused, "refused", "\(device.friendlyName): \(type): \(error)")
        }
    }
}

/// castline's version, as `--version` and the API say it.
package enum CastlineVersion {
    package static let string = "0.9.0"
}
