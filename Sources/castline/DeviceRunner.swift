import CastlineDaemon
import ArgumentParser
import CastCore
import CastLogging
import CastProtocol
import CastSender
import Glibc

/// Runs one action on every device `--device` resolves to, each in its own session, in
/// parallel; prints one result per device (text, or one JSON object per line); leaves the
/// receiver app running. Exit code: the worst of the devices' (4 refused, 1 failure).
struct DeviceRunner {
    let environment: CommandEnvironment
    let json: Bool
    let policy: CastOptions.JoinPolicy
    /// Print the multi-line status view instead of one line per device (text output).
    var fullView = false

    enum Outcome: Sendable {
        case done(StatusSnapshot)
        case refused(String)
        case failed(String)
    }

    func run(_ action: @escaping @Sendable (CastSession) async -> Result<Void, CastRequestError>) async throws {
        let devices = try await environment.resolveDevices()
        let manager = SessionManager(options: environment.castOptions(policy: policy), group: environment.group)
        let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    (index, await Self.runOne(device: device, manager: manager, environment: environment, action: action))
                }
            }
            var results: [(Int, Outcome)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        await manager.shutdown(stopCasting: false)
        var exit: ExitCode?
        for (device, outcome) in zip(devices, outcomes) {
            switch outcome {
            case .done(let snapshot):
                if json {
                    printLine(snapshot.json(at: MonotonicClock.seconds()).serialized())
                } else if fullView {
                    for line in StatusView.render(snapshot, now: snapshot.receivedAt, width: StatusView.terminalWidth()) { printLine(line) }
                } else {
                    printLine(Self.oneLine(snapshot))
                }
            case .refused(let why):
                printError("castline: \(device.friendlyName): \(why)")
                if exit == nil { exit = CastlineExit.refused }
            case .failed(let why):
                printError("castline: \(device.friendlyName): \(why)")
                exit = CastlineExit.failure
            }
        }
        if let exit { throw exit }
    }

    static func runOne(device: CastDevice, manager: SessionManager, environment: CommandEnvironment,
                       action: @Sendable (CastSession) async -> Result<Void, CastRequestError>) async -> Outcome {
        let session: CastSession
        do {
            session = try await manager.startSession(on: device)
        } catch {
            if case .appNotRunning = error { return .refused("nothing is casting (no media app runs)") }
            return .failed("\(error)")
        }
        switch await action(session) {
        case .success:
            return .done(await snapshot(of: session))
        case .failure(let error):
            switch error {
            case .timedOut, .disconnected, .cancelled: return .failed("\(error)")
            default: return .refused("\(error)")
            }
        }
    }

    static func snapshot(of session: CastSession) async -> StatusSnapshot {
        let device = await session.device
        let status = await session.deviceStatus
        let ended = await session.state.isFinal
        return StatusSnapshot(deviceName: device.friendlyName, deviceID: device.id, endpoint: device.endpoint,
                              app: ended ? nil : await session.application, deviceVolume: status?.volumeLevel, deviceMuted: status?.isMuted,
                              media: ended ? nil : session.remoteMediaClient.mediaStatus, receivedAt: MonotonicClock.seconds())
    }

    /// `Living Room TV: PLAYING "Title" 01:02 / 02:00 volume 40% [4K HDR]`, the position at `now`
    /// (default: when the status arrived).
    static func oneLine(_ s: StatusSnapshot, now: Double? = nil) -> String {
        var line = "\(s.deviceName): \(s.state)"
        if let title = s.title { line += " \"\(title)\"" }
        if let position = s.position(at: now ?? s.receivedAt) {
            line += " \(StatusView.clock(position))"
            if let duration = s.media?.effectiveMedia?.duration { line += " / \(StatusView.clock(duration))" }
        }
        if let volume = s.deviceVolume { line += " volume \(Int((volume * 100).rounded()))%" }
        if s.deviceMuted == true { line += " muted" }
        if let badge = s.badge { line += " [\(badge)]" }
        return line
    }
}

extension CastRequest {
    /// The result without the value (commands only care that the device accepted).
    var outcome: Result<Void, CastRequestError> {
        get async { (await result).map { _ in () } }
    }
}
