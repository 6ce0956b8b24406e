import CastCore
import CastLogging
import CastPluginHost
import CastReceiverSim
import CastReceiverSimServer
import CastSender
import Foundation
import Synchronization

/// Tests one channel plugin file the way castline runs it, with nothing else around: the real
/// loader (scanner, ABI checks, isolation as castline would choose it), a simulated device on
/// loopback whose app declares the plugin's namespaces and answers as the script says, and a
/// real session to it. Each step of a ``HarnessScript`` becomes one ``HarnessResult``; the
/// plugin's records and the host's records about it are kept for `expect_record` steps.
/// `castline plugins test` is its command line.
package struct PluginHarness: Sendable {
    package struct Options: Sendable {
        package var file: String
        /// nil: as castline would run the plugin (a file named on the command line runs isolated).
        package var inProcess: Bool?
        /// `plugins.call_timeout` for the plugin's calls.
        package var callTimeout: Double = 5
        /// Describe and initialise the file in a child process first (`castline plugin-scan`, as
        /// castline does); false loads it here directly (the harness program under valgrind).
        package var scan = true
        package init(file: String, inProcess: Bool? = nil) {
            self.file = file
            self.inProcess = inProcess
        }
    }

    /// The simulated app's id: "castline plugin harness".
    package static let appID = "CA57E575"
    private let options: Options

    package init(options: Options) { self.options = options }

    /// Loads the plugin, finds its channel features and runs `script` (nil: the smoke script)
    /// on each one it names. Never throws: every problem is a failed result.
    package func run(script: HarnessScript?) async -> HarnessReport {
        var report = HarnessReport(file: options.file)
        let records = HarnessRecords()
        let logSystem = LogSystem(filter: (try? LoggerFilter(parsing: "", minimumLevel: .debug)) ?? LoggerFilter())
        logSystem.addSink(records)
        defer { logSystem.shutdown(timeout: .seconds(2)) }

        // The plugin's channel features and their namespaces, as the scanner describes them.
        let described = PluginHost(configuration: configuration(allowing: []), logSystem: LogSystem(filter: LoggerFilter(minimumLevel: .none)))
        described.loadAll()
        let plugin = described.declaredPlugin(atPath: options.file)
        let problems = described.problems
        described.shutdown()
        guard let plugin else {
            report.add("load", passed: false, problems.isEmpty ? "not a castline plugin" : problems.map(\.description).joined(separator: "; "))
            return report
        }
        report.pluginID = plugin.id
        report.abiMinor = Int(plugin.abiMinor)
        let channels = plugin.features.filter { $0.kind == .channel }
        let wanted = script?.feature.map { id in channels.filter { $0.id == id } } ?? channels
        guard !wanted.isEmpty else {
            let names = channels.map(\.id).joined(separator: ", ")
            report.add(
                "load", passed: false,
                script?.feature.map { "no channel feature \($0) (it has: \(names.isEmpty ? "none" : names))" }
                    ?? "the plugin has no channel feature: the harness tests channels")
            return report
        }
        let namespaces = wanted.flatMap(\.declarations)
        var configuration = configuration(allowing: Set(namespaces))
        if let config = script?.config, config != .object([:]) { configuration.pluginConfigs[plugin.id] = config.serialized() }
        switch options.inProcess {
        case true?: configuration.inProcessPlugins = [plugin.id]
        case false?: configuration.isolatedPlugins = [plugin.id]
        case nil: break
        }
        let host = PluginHost(configuration: configuration, logSystem: logSystem)
        host.loadAll()
        defer { host.shutdown() }
        guard host.plugins.contains(where: { $0.id == plugin.id }) else {
            let refused = host.problems
            report.add("load", passed: false, refused.isEmpty ? "the plugin did not load" : refused.map(\.description).joined(separator: "; "))
            return report
        }
        report.add(
            "load", passed: true,
            "\(plugin.id) \(plugin.version), ABI 1.\(plugin.abiMinor), "
                + (host.isolatedPlugin(plugin.id) == nil ? "in process" : "isolated"))
        let frameLog = NSTemporaryDirectory() + "castline-harness-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl"
        defer { unlink(frameLog) }
        let simulator: ReceiverSimulator
        do {
            simulator = try await ReceiverSimulator.startOnFreePorts(
                count: 1,
                settings: simulatorSettings(namespaces, script?.app ?? Dictionary(uniqueKeysWithValues: namespaces.map { ($0, .echo) }), frameLog),
                logSystem: LogSystem(filter: LoggerFilter(minimumLevel: .none)))
        } catch {
            report.add("simulator", passed: false, "the simulated device did not start: \(error)")
            return report
        }
        for feature in wanted {
            let steps = script ?? HarnessScript.smoke(feature: feature.id)
            let run = HarnessRun(feature: feature, host: host, simulator: simulator, records: records, frameLog: frameLog, logSystem: logSystem)
            report.results += await run.run(steps)
        }
        await simulator.stop()
        return report
    }

    private func configuration(allowing namespaces: Set<String>) -> PluginHostConfiguration {
        var configuration = PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: [options.file], executableFolder: nil),
            allowedNamespaces: namespaces, scanner: options.scan ? PluginScanner.castline(timeout: options.callTimeout) : nil)
        configuration.callTimeout = options.callTimeout
        configuration.featureKinds = [.channel]
        return configuration
    }

    private func simulatorSettings(_ namespaces: [String], _ modes: [String: HarnessScript.AppMode], _ frameLog: String) -> SimulatorSettings {
        var settings = SimulatorSettings()
        settings.advertise = false
        settings.threads = 1
        settings.frameLogPath = frameLog
        let behaviours = namespaces.map { namespace -> CustomNamespaceBehaviour in
            let mode: CustomNamespaceBehaviour.Mode =
                switch modes[namespace] ?? .silent {
                case .silent: .silent
                case .echo: .echo
                case .replies(let table): .scripted(table)
                }
            return CustomNamespaceBehaviour(namespace: CastNamespace(rawValue: namespace), mode: mode)
        }
        settings.apps = [
            AppDefinition(
                appID: Self.appID, displayName: "castline plugin harness",
                namespaces: behaviours.map(\.namespace), supportedMediaCommands: [], customNamespaces: behaviours)
        ]
        return settings
    }
}

/// What one step showed.
package struct HarnessResult: Sendable, Equatable {
    package let feature: String
    package let step: String
    package let passed: Bool
    package let detail: String
}

/// Everything `castline plugins test` found, in order.
package struct HarnessReport: Sendable {
    package let file: String
    package var pluginID: String?
    package var abiMinor: Int?
    package var results: [HarnessResult] = []

    package var passed: Bool { !results.isEmpty && results.allSatisfy(\.passed) }

    mutating func add(_ step: String, passed: Bool, _ detail: String) {
        results.append(HarnessResult(feature: "", step: step, passed: passed, detail: detail))
    }

    /// One line per result, TAP style (`ok 3 - example-ping: app stop: …`), then the plan.
    package var lines: [String] {
        var lines = ["TAP version 13"]
        for (index, result) in results.enumerated() {
            let name = result.feature.isEmpty ? result.step : "\(result.feature): \(result.step)"
            lines.append("\(result.passed ? "ok" : "not ok") \(index + 1) - \(name)" + (result.detail.isEmpty ? "" : ": \(result.detail)"))
        }
        lines.append("1..\(results.count)")
        return lines
    }

    package var json: JSONValue {
        .object([
            "file": .string(file), "plugin": pluginID.map { .string($0) } ?? .null, "abi_minor": abiMinor.map { .int(Int64($0)) } ?? .null,
            "passed": .bool(passed),
            "results": .array(
                results.map { r in
                    .object(["feature": .string(r.feature), "step": .string(r.step), "passed": .bool(r.passed), "detail": .string(r.detail)])
                }),
        ])
    }
}
