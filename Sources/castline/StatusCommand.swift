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
        let target = try options.target()
        do {
            try await show(on: target)
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }

    private func show(on target: any ControlTarget) async throws {
        let view = !options.json && isatty1
        var worst: ExitCode?
        for device in try await target.devices(options.device.device) {
            if follow {
                _ = try await DeviceFollower(target: target, device: device, json: options.json, view: view).follow(for: duration)
                continue
            }
            switch await target.show(device) {
            case .success(let answer):
                if !options.json, let snapshot = StatusSnapshot(json: answer, receivedAt: MonotonicClock.seconds()) {
                    for line in StatusView.render(snapshot, now: snapshot.receivedAt, width: StatusView.terminalWidth()) { printLine(line) }
                } else {
                    CommandOutput.print(answer, json: options.json)
                }
            case .failure(let error):
                let code = CommandOutput.exit(error)
                if worst == nil || code.rawValue == 1 { worst = code }
            }
        }
        if let worst { throw worst }
    }
}
