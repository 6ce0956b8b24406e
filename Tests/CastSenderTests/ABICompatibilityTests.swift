import CastCore
import CastLogging
import CastPluginHost
import CastPluginSession
import CastSender
import CastTestSupport
import Foundation
import Testing

/// A plugin built against the frozen ABI 1.0 header (`Tests/PluginFixtures/ABI1_0`, header and
/// source committed, compiled here with the system C compiler) loads in the current host and
/// every feature kind works: the promise that fields are only appended, kept.
@Suite struct ABICompatibilityTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PluginFixtures/ABI1_0").path

    /// Compiles the 1.0 plugin into `folder` against the frozen header only; the library's path.
    /// `-fvisibility=hidden`: the export macro must make the entry symbol visible by itself.
    static func build(into folder: ScratchFolder) throws -> String {
        let output = folder.path + "/libabi10.so"
        let (status, log) = try run("cc -std=c11 -Wall -Wextra -Werror -fvisibility=hidden -shared -fPIC "
            + "-I '\(fixtures)' '\(fixtures)/abi10_plugin.c' -o '\(output)'")
        try #require(status == 0, "the 1.0 fixture does not compile against its own header:\n\(log)")
        return output
    }

    static func run(_ command: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func theFrozenHeaderIsABI1Point0() throws {
        let text = try String(contentsOfFile: Self.fixtures + "/castline_plugin.h", encoding: .utf8)
        #expect(text.contains("#define CASTLINE_PLUGIN_ABI_MAJOR 1 "))
        #expect(text.contains("#define CASTLINE_PLUGIN_ABI_MINOR 0 "))
    }

    @Test func aPluginBuiltAgainstThe1Point0HeaderLoadsAndEveryFeatureWorks() async throws {
        let folder = ScratchFolder("abi10")
        defer { folder.remove() }
        let library = try Self.build(into: folder)
        try await withSenderRig { rig in
            let host = PluginHost(configuration: PluginHostConfiguration(
                searchPath: PluginSearchPath(commandLine: [library], executableFolder: nil),
                allowedNamespaces: ["urn:x-cast:org.castline.abi10"], pluginConfigs: ["abi10": #"{"from":"test"}"#],
                checkFileSafety: false), logSystem: rig.logSystem)
            host.loadAll()
            defer { host.shutdown() }
            let errors = rig.logRecords.filter { $0.level >= .error }.map(\.message)
            #expect(errors.isEmpty, "\(errors)")
            let plugin = try #require(host.plugins.first)
            #expect(plugin.id == "abi10")
            #expect(plugin.abiMinor == 0)
            #expect(host.features.map { "\($0.kind):\($0.id)" }
                == ["discovery:abi10-discovery", "channel:abi10-channel", "media_format:abi10-format", "log_sink:abi10-sink"])

            // init logged through the host, with its field.
            let initialised = try #require(rig.logRecords.first { $0.className == "ABI10" })
            #expect(initialised.message == "abi10 initialised")
            #expect(initialised.fields["config"] == #"{"from":"test"}"#)

            // media format
            let info = try host.probeMediaFormat(url: "http://127.0.0.1/x", contentType: "application/x-abi10").get()
            #expect(info.contentType == "application/x-abi10")
            #expect(info.streamType == .live)

            // log sink: records with fields, through a log system of its own.
            let path = folder.path + "/sink.log"
            let sink = try host.openLogSink(id: "abi10-sink", options: #"{"path":"\#(path)"}"#)
            let system = LogSystem()
            system.addSink(sink)
            Logger(class: "Probe", system: system).warning("one", ["n": 7, "who": "abi"])
            Logger(class: "Probe", system: system).error("two")
            #expect(system.shutdown())
            sink.close()
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            // Each record names its process (the host adds pid and role to what a plugin sink gets).
            let process = "pid=\(getpid()) role=embedded"
            #expect(lines == ["4 Probe one n=7 who=abi \(process)", "5 Probe two \(process)"])

            // discovery
            let manager = rig.discoveryManager(criteria: .any)
            for provider in host.discoveryProviders() { await manager.add(provider) }
            await manager.start()
            let devices = await pollValue(timeout: 10) { () async -> [CastDevice]? in
                let devices = await manager.devices
                return devices.isEmpty ? nil : devices
            } ?? []
            #expect(devices.map(\.id) == ["abi10-device"])
            await manager.stop()

            // channel, on a real session.
            let session = try await rig.manager(appID: PluginChannelTests.appID).startSession(on: rig.device())
            let channel = try await host.openChannel(id: "abi10-channel", on: session)
            let answer = try await channel.command(["ask": "42"]).get()
            #expect(answer == ["answer": ["ask": "42"]])
            await channel.close()
            await session.end(stopCasting: true)
        }
    }
}
