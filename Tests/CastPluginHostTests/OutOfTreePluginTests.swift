import CCastPluginABI
import CastPluginHost
import CastTestSupport
import Foundation
import Testing

/// A C plugin built outside the tree with only the installed header and `pkg-config`, as a
/// plugin author would, then loaded by the host.
@Suite struct OutOfTreePluginTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @discardableResult
    func run(_ command: String, environment: [String: String] = [:]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func cPluginBuiltWithPkgConfigLoads() throws {
        let scratch = ScratchFolder("sdk")
        defer { _ = try? run("rm -rf '\(scratch.path)'") }
        let (installed, installLog) = try run("'\(Self.root)/scripts/install-plugin-sdk.sh' '\(scratch.path)/prefix'")
        #expect(installed == 0, "\(installLog)")
        let env = ["PKG_CONFIG_PATH": scratch.path + "/prefix/lib/pkgconfig"]
        let (version, versionText) = try run("pkg-config --modversion castline-plugin", environment: env)
        #expect(version == 0)
        #expect(versionText.trimmingCharacters(in: .whitespacesAndNewlines) == "1.\(CASTLINE_PLUGIN_ABI_MINOR)")
        // Only the installed SDK and jansson: the source is copied out of the tree first.
        try run("cp '\(Self.root)/Plugins/EchoChannelC/echo_channel.c' '\(scratch.path)/'")
        let (built, buildLog) = try run(
            "cd '\(scratch.path)' && cc -Wall -Werror -shared -fPIC echo_channel.c $(pkg-config --cflags --libs castline-plugin jansson) -o libecho.so",
            environment: env)
        #expect(built == 0, "\(buildLog)")
        let rig = try PluginHostRig(paths: [scratch.path + "/libecho.so"]) { $0.allowedNamespaces = ["urn:x-cast:org.castline.example.echo"] }
        rig.host.loadAll()
        #expect(rig.hostErrors.isEmpty)
        #expect(rig.host.plugins.map(\.id) == ["echo-channel-c"])
        #expect(rig.host.feature(.channel, id: "example-echo")?.declarations == ["urn:x-cast:org.castline.example.echo"])
    }
}
