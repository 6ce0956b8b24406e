import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastReceiverSimServer
import CastSender
import Foundation
import Synchronization

/// One channel feature under test: a session to the simulated device with the harness app
/// running, the feature opened on it, and the script's steps in order. A step that fails is
/// reported and the next one runs (a later step may depend on it and fail too).
struct HarnessRun {
    let feature: PluginFeature
    let host: PluginHost
    let simulator: ReceiverSimulator
    let records: HarnessRecords
    let frameLog: String
    let logSystem: LogSystem

    func run(_ script: HarnessScript) async -> [HarnessResult] {
        var results: [HarnessResult] = []
        func add(_ step: String, _ passed: Bool, _ detail: String) {
            results.append(HarnessResult(feature: feature.id, step: step, passed: passed, detail: detail))
        }
        var options = CastOptions(receiverAppID: PluginHarness.appID)
        options.joinPolicy = .follow
        options.logSystem = logSystem
        options.requestTimeout = 5
        let manager = SessionManager(options: options, threads: 1)
        let c = simulator.devices[0].configuration
        let session: CastSession
        do {
            session = try await manager.startSession(on: CastDevice(id: c.uuid, friendlyName: c.name, host: c.address, port: c.castPort))
            _ = try await session.launch(appID: PluginHarness.appID)
        } catch {
            add("session", false, "no session to the simulated device: \(error)")
            await manager.shutdown()
            return results
        }
        let resumes = ResumeCount()
        let watcher = Task {
            for await update in session.updates() {
                if case .event(.didResume, _) = update { resumes.count.withLock { $0 += 1 } }
            }
        }
        let channel: PluginChannel
        do {
            channel = try await host.openChannel(id: feature.id, on: session)
            add("open", true, "on \(feature.declarations.joined(separator: ", "))")
        } catch {
            add("open", false, "\(error)")
            watcher.cancel()
            await manager.shutdown(stopCasting: true)
            return results
        }
        var sentCursor = FrameLogCursor(path: frameLog)
        var recordCursor = 0
        let firstNamespace = feature.declarations.first ?? ""
        for step in script.steps {
            switch step {
            case .command(let object, let reply, let error, let timeout):
                let name = "command \(object.serialized())"
                let result = await channel.command(object, timeout: .milliseconds(Int64(timeout * 1000)))
                switch (result, reply, error) {
                case (.success(let answer), let reply?, _):
                    add(
                        name, HarnessScript.contains(answer, reply),
                        "answered \(answer.serialized())"
                            + (HarnessScript.contains(answer, reply) ? "" : "; expected it to contain \(reply.serialized())"))
                case (.success(let answer), nil, let error?):
                    add(name, false, "answered \(answer.serialized()); expected a failure containing \"\(error)\"")
                case (.success(let answer), nil, nil):
                    add(name, true, "answered \(answer.serialized())")
                case (.failure(let failure), _, let error?):
                    add(
                        name, failure.reason.contains(error),
                        "failed: \(failure.reason)" + (failure.reason.contains(error) ? "" : "; expected \"\(error)\""))
                case (.failure(let failure), let reply?, nil):
                    add(name, false, "failed: \(failure.reason); expected an answer containing \(reply.serialized())")
                case (.failure(let failure), nil, nil):
                    // Any answer passes; a command the plugin never answered, or a plugin that is gone, does not.
                    let silent = failure.unavailable || failure.reason.contains("did not answer within")
                    add(name, !silent, "failed: \(failure.reason)")
                }
            case .appSends(let payload, let namespace):
                let ns = namespace ?? firstNamespace
                let answer = try? await simulator.control.execute(["command": "push", "device": 0, "namespace": .string(ns), "payload": payload])
                    .get()
                add("app sends \(payload.serialized())", answer?["ok"]?.bool == true, answer?["error"]?.string ?? "on \(ns)")
            case .expectSent(let payload, let namespace, let within):
                let ns = namespace ?? firstNamespace
                let found = await Self.waitFor(within) { sentCursor.next(namespace: ns, containing: payload) }
                add(
                    "sent \(payload.serialized())", found != nil,
                    found.map { "the app got \($0.serialized())" } ?? "nothing matching reached the app on \(ns) within \(within) s")
            case .expectRecord(let pattern, let within):
                let found = await Self.waitFor(within) { records.first(matching: pattern, from: recordCursor) }
                if let found { recordCursor = found.index + 1 }
                add(
                    "record \(Self.describe(pattern))", found != nil,
                    found.map { "\($0.record.className) \($0.record.level.name): \($0.record.message)" } ?? "no such record within \(within) s")
            case .app(let action):
                let (passed, detail) = await perform(action, session: session, resumes: resumes, channel: channel)
                add("app \(action.rawValue)", passed, detail)
            }
        }
        await channel.close()
        watcher.cancel()
        // The plugin kept its bounds and did not crash while it was tested (every record in first:
        // sinks write on threads of their own).
        _ = logSystem.flush()
        let faults = records.records.filter {
            $0.level >= .error && ["IsolatedPlugin", "PluginChannel", "PluginHost"].contains($0.className)
        }
        add(
            "no crash, hang or overrun", faults.isEmpty && channel.overrun == nil,
            faults.first.map { "\($0.className): \($0.message)" } ?? channel.overrun.map { "\($0.call) overran \($0.bound) s" } ?? "")
        await manager.shutdown(stopCasting: true)
        return results
    }

    /// Makes `action` happen and waits (bounded) until the session and the plugin saw it.
    private func perform(_ action: HarnessScript.AppAction, session: CastSession, resumes: ResumeCount, channel: PluginChannel) async -> (
        Bool, String
    ) {
        let event: PluginAppNotice.Event =
            switch action {
            case .stop: .stopped
            case .relaunch: .relaunched
            case .drop: .sessionResumed
            }
        let told = "on_app_event: " + event.name
        let start = records.count
        switch action {
        case .stop:
            _ = try? await simulator.control.execute(["command": "stop-app", "device": 0]).get()
            let gone = await Self.waitFor(5) { await session.application == nil ? true : nil }
            guard gone != nil else { return (false, "the session still shows the app 5 s after it stopped") }
        case .relaunch:
            do { _ = try await session.launch(appID: PluginHarness.appID, timeout: 10) } catch { return (false, "LAUNCH failed: \(error)") }
        case .drop:
            let before = resumes.count.withLock { $0 }
            _ = try? await simulator.control.execute(["command": "outage", "device": 0, "downFor": 1]).get()
            let back = await Self.waitFor(20) { resumes.count.withLock { $0 } > before ? true : nil }
            guard back != nil else { return (false, "the session did not resume within 20 s of a 1 s outage") }
        }
        let pattern = HarnessScript.RecordPattern(className: "PluginChannel", message: told)
        let heard = await Self.waitFor(5) { records.first(matching: pattern, from: start) }
        if heard != nil { return (true, "the plugin was told (\(event.name))") }
        return (false, "the host did not tell the plugin \(event.name) within 5 s")
    }

    private static func describe(_ p: HarnessScript.RecordPattern) -> String {
        [p.className, p.level, p.message.map { "\"\($0)\"" }, p.fields?.serialized()].compactMap { $0 }.joined(separator: " ")
    }

    /// Polls `probe` every 20 ms until it gives a value or `seconds` pass (bounded in count too).
    static func waitFor<T>(_ seconds: Double, _ probe: () async -> T?) async -> T? {
        let rounds = max(1, Int(seconds / 0.02))
        for round in 0...rounds {
            if let value = await probe() { return value }
            if round < rounds { try? await Task.sleep(for: .milliseconds(20)) }
        }
        return nil
    }
}

/// How often the session resumed (a drop step waits for one more).
final class ResumeCount: Sendable {
    let count = Mutex(0)
}

/// Reads the simulator's frame log from where it was last read: the messages that reached the
/// device from a sender.
struct FrameLogCursor {
    let path: String
    private var offset = 0

    init(path: String) { self.path = path }

    /// The payload of the next message in to the device on `namespace` that contains `payload`;
    /// lines read past are not read again.
    mutating func next(namespace: String, containing payload: JSONValue) -> JSONValue? {
        // Only what was written since the last read (the log only grows).
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard (try? file.seek(toOffset: UInt64(offset))) != nil, let fresh = try? file.readToEnd(), !fresh.isEmpty,
            let lastNewline = fresh.lastIndex(of: UInt8(ascii: "\n"))
        else { return nil }
        for line in fresh[fresh.startIndex...lastNewline].split(separator: UInt8(ascii: "\n")) {
            offset += line.count + 1
            guard let entry = try? JSONValue.parse(String(decoding: line, as: UTF8.self)),
                entry["direction"]?.string == "in", entry["namespace"]?.string == namespace, let sent = entry["payload"]
            else { continue }
            if HarnessScript.contains(sent, payload) { return sent }
        }
        return nil
    }
}
