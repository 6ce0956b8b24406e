import CastlineDaemon
import ArgumentParser
import CastCore
import CastProtocol
import CastSender
import Glibc

/// `castline status [--follow] [--json]`: what plays on the device; with --follow a live view.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what plays on a device: title, state, progress, volume, 4K/HDR badge.",
        discussion: """
            Through the castline daemon when one runs (--direct: always on its own). Directly, it connects to \
            the device and follows whatever app runs there (it launches nothing and leaves the app running); \
            an idle device is a normal answer (state NO_APP), not an error.
            --follow: the state now, then a live view redrawn every second and on every change (in a terminal), \
            or one line (one JSON object with --json) per change; ends on SIGINT/SIGTERM, --for, or when the \
            session ends.
            JSON keys: device, id, endpoint, state, app, appId, sessionId, volume, muted, title, subtitle, \
            contentId, contentType, streamType, duration, currentTime, playbackRate, video, badge, \
            idleReason, mediaSessionId, mediaStatus (the device's MEDIA_STATUS entry as sent).
            """ + "\n" + CastlineExit.summary)

    @OptionGroup var options: ControlOptions
    @Flag(name: .long, help: "Keep watching and redraw on every change.")
    var follow = false
    @Option(name: .customLong("for"), help: "With --follow: stop after this many seconds.")
    var duration: Double?

    var isatty1: Bool { isatty(1) == 1 }

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 86_400 * 365) { throw ValidationError("--for must be a positive number of seconds") }
    }

    func run() async throws {
        if let daemon = options.daemon {
            for device in try daemon.devices(options.device.device) {
                if follow {
                    try DaemonFollow.follow(daemon, device: device, json: options.json, for: duration)
                    continue
                }
                let answer = try daemon.send("GET", DaemonClient.path(device))
                if options.json || !isatty1 {
                    daemon.print(answer, json: options.json)
                } else if let snapshot = StatusSnapshot(json: answer, receivedAt: MonotonicClock.seconds()) {
                    for line in StatusView.render(snapshot, now: snapshot.receivedAt, width: StatusView.terminalWidth()) { printLine(line) }
                }
            }
            return
        }
        let environment = try CommandEnvironment(options: options.device.request, featureKinds: [])
        do {
            if follow { try await runFollow(environment) } else {
                try await DeviceRunner(environment: environment, json: options.json, policy: .follow, fullView: true).run { _ in .success(()) }
            }
        } catch {
            await environment.shutdown()
            throw error
        }
        await environment.shutdown()
    }

    private func runFollow(_ environment: CommandEnvironment) async throws {
        SignalWaiter.block([SIGINT, SIGTERM])
        guard let device = try await environment.resolveDevices().first else { return }
        let manager = SessionManager(options: environment.castOptions(policy: .follow), group: environment.group)
        let session: CastSession
        do { session = try await environment.startSession(on: device, manager: manager) } catch {
            await manager.shutdown()
            throw error
        }
        let (ticks, tick) = AsyncStream<Bool>.makeStream()
        let updates = session.remoteMediaClient.statusUpdates()
        let forwarding = Task {
            for await _ in updates { tick.yield(true) }
        }
        let timer = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                tick.yield(false)
            }
        }
        let ending = Task {
            _ = await SignalWaiter.wait([SIGINT, SIGTERM])
            tick.finish()
        }
        let deadline = duration.map { MonotonicClock.seconds() + $0 }
        let terminal = !options.json && isatty(1) == 1
        var drawn = 0
        var receivedAt = MonotonicClock.seconds()
        var lastLine = ""
        // The state now comes first: a follower sees where things are before the first change.
        if options.json { printLine(await DeviceRunner.snapshot(of: session).json(at: receivedAt).serialized()) }
        for await changed in ticks {
            let now = MonotonicClock.seconds()
            if changed { receivedAt = now }
            var snapshot = await DeviceRunner.snapshot(of: session)
            snapshot.receivedAt = receivedAt
            if options.json {
                if changed { printLine(snapshot.json(at: now).serialized()) }
            } else if terminal {
                let lines = StatusView.render(snapshot, now: now, width: StatusView.terminalWidth())
                var text = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                for line in lines { text += "\u{1B}[2K" + line + "\n" }
                if lines.count < drawn { text += "\u{1B}[J" }
                drawn = lines.count
                _ = text.withCString { write(1, $0, strlen($0)) }
            } else {
                let line = DeviceRunner.oneLine(snapshot, now: now)
                if changed || line != lastLine { printLine(line) }
                lastLine = line
            }
            if let deadline, now >= deadline { break }
            if await session.state.isFinal { break }
        }
        forwarding.cancel()
        timer.cancel()
        ending.cancel()
        await manager.shutdown(stopCasting: false)
    }
}
