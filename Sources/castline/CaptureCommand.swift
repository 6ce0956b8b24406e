import ArgumentParser
import CastCore
import CastProtocol
import CastSender
import CastTransport
import Glibc

/// `castline capture --device X [--for S] FILE`: records a session with a device, from the
/// sender side, for `castline sim --replay`.
struct CaptureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Record every frame of a session with a device (plus its eureka_info and TXT) as JSON lines.",
        discussion: """
            Connects to the device and follows whatever app runs there (it launches and stops nothing: \
            drive the device from any sender meanwhile), writing each frame in and out with its time \
            offset to FILE as it goes. Ends after --for seconds or on SIGINT/SIGTERM. Tokens, passwords \
            and credentials are redacted unless --no-redact. Replay it with `castline sim --replay FILE`.
            """ + "\n" + CastlineExit.summary)

    @OptionGroup var device: DeviceOptions
    @Option(name: .customLong("for"), help: "Stop after this many seconds (default: until SIGINT/SIGTERM).")
    var duration: Double?
    @Flag(name: .long, help: "Keep tokens and credentials in the capture.")
    var noRedact = false
    @Argument(help: "The capture file (JSON lines), created or truncated.")
    var file: String

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 86_400) { throw ValidationError("--for must be a positive number of seconds, at most 86400") }
        if file.isEmpty { throw ValidationError("FILE must not be empty") }
    }

    func run() async throws {
        SignalWaiter.block([SIGINT, SIGTERM])
        let environment = try CommandEnvironment(options: device.request, featureKinds: [])
        do {
            try await capture(environment)
        } catch {
            await environment.shutdown()
            throw error
        }
        await environment.shutdown()
    }

    private func capture(_ environment: CommandEnvironment) async throws {
        guard var target = try await environment.resolveDevices().first else { throw CastlineExit.noDevice }
        let writer: CaptureWriter
        do { writer = try CaptureWriter(path: file, redact: !noRedact) } catch {
            printError("castline capture: \(error)")
            throw CastlineExit.usage
        }
        let eureka = await EurekaInfoClient.document(host: target.host, group: environment.group)
        // A device named by address on another port than 8009 was not identified: its
        // eureka_info names it (id, name, model), so the capture carries the device's identity.
        if target.provider == "address", let eureka, let info = EurekaDeviceInfo.parse(body: eureka.serializedBytes(), peerCommonName: nil) {
            target.id = info.id ?? target.id
            target.friendlyName = info.name ?? target.friendlyName
            target.modelName = info.model ?? target.modelName
        }
        writer.header(device: target, eurekaInfo: eureka)
        var options = CastOptions()
        options.joinPolicy = .follow
        options.disableDiscoveryAutostart = true
        options.logSystem = environment.logSystem
        options.frameObserver = { event in
            switch event {
            case .frame(let message, let inbound): writer.frame(message, inbound: inbound)
            case .closed: writer.closed()
            }
        }
        let manager = SessionManager(options: options, group: environment.group)
        let session: CastSession
        do {
            session = try await manager.startSession(on: target)
        } catch {
            writer.end(reason: "connect failed: \(error)")
            printError("castline capture: \(target.friendlyName): \(error)")
            await manager.shutdown(stopCasting: false)
            throw CastlineExit.noDevice
        }
        printError("castline capture: recording \(target.friendlyName) to \(file)" + (duration.map { " for \($0.formatted) s" } ?? " until SIGINT"))
        let reason = await Self.waitForEnd(duration: duration)
        await session.end(stopCasting: false)
        await manager.shutdown(stopCasting: false)
        writer.end(reason: reason)
        printError("castline capture: \(writer.framesWritten) frames written to \(file) (\(reason))")
    }

    /// "duration" after `duration` seconds, "signal" on SIGINT/SIGTERM, whichever comes first.
    /// (The signal wait cannot be cancelled, so it is not a child task that would be awaited.)
    static func waitForEnd(duration: Double?) async -> String {
        let (ends, end) = AsyncStream<String>.makeStream()
        let signal = Task {
            _ = await SignalWaiter.wait([SIGINT, SIGTERM])
            end.yield("signal")
        }
        let timer = duration.map { seconds in
            Task {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                end.yield("duration")
            }
        }
        defer {
            signal.cancel()
            timer?.cancel()
        }
        for await reason in ends { return reason }
        return "signal"
    }
}
