import CastCore
import CastTestSupport
import Foundation
import Testing

/// `castline plugins list|inspect` (the built binary) with plugins that crash or hang in init:
/// the scan in `castline plugin-scan` children reports each with its file, signal or bound, and
/// the command itself neither crashes nor hangs.
@Suite struct PluginScanCommandTests {
    static let crashes = BuiltProducts.library("TestPluginCrashesInInit")
    static let hangs = BuiltProducts.library("TestPluginHangsInInit")

    /// A scratch HOME with a config whose plugins.call_timeout is 1 s.
    static func home() throws -> (home: String, config: String) {
        let home = DoctorAndPluginsTests.scratch()
        let config = home + "/castline.yaml"
        try DoctorAndPluginsTests.write("plugins:\n  call_timeout: 1\n", to: config)
        return (home, config)
    }

    @Test func listReportsACrashAndAHangAndListsTheRest() throws {
        let (home, config) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let start = ContinuousClock.now
        let run = try DoctorAndPluginsTests.run(["plugins", "list", "--json", "--config", config,
                                                 "--plugin-path", Self.crashes, "--plugin-path", Self.hangs], home: home, timeout: 20)
        let elapsed = ContinuousClock.now - start
        #expect(run.status == 0, "\(run.stderr)")
        let problems = try #require(run.json?["problems"]?.array, "\(run.stdout)")
        let crashed = problems.first { $0["kind"]?.string == "crashed" }
        #expect(crashed?["path"]?.string == Self.crashes)
        #expect(crashed?["pluginId"]?.string == "test-crashes-in-init")
        #expect(crashed?["reason"]?.string?.contains("signal 11 (SIGSEGV)") == true, "\(problems)")
        let timedOut = problems.first { $0["kind"]?.string == "timed_out" }
        #expect(timedOut?["path"]?.string == Self.hangs)
        #expect(timedOut?["reason"]?.string?.contains("within 1 s") == true, "\(problems)")
        // The built plugins next to the binary are listed as ever.
        let ids = run.json?["plugins"]?.array?.compactMap { $0["id"]?.string } ?? []
        #expect(ids.contains("json-sink") && ids.contains("media-formats"), "\(ids)")
        #expect(!ids.contains("test-crashes-in-init") && !ids.contains("test-hangs-in-init"))
        #expect(elapsed < .seconds(10), "plugins list took \(elapsed)")
    }

    @Test func inspectOfAPluginThatCrashesInInitShowsItsDescriptionAndExits1() throws {
        let (home, config) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let json = try DoctorAndPluginsTests.run(["plugins", "inspect", Self.crashes, "--json", "--config", config], home: home)
        #expect(json.status == 1, "\(json.stderr)")
        #expect(json.json?["id"]?.string == "test-crashes-in-init", "\(json.stdout)")
        #expect(json.json?["status"]?.string == "crashed")
        #expect(json.json?["problems"]?[0]?["reason"]?.string?.contains("SIGSEGV") == true, "\(json.stdout)")
        let text = try DoctorAndPluginsTests.run(["plugins", "inspect", Self.crashes, "--config", config], home: home)
        #expect(text.status == 1)
        #expect(text.stdout.contains("crashed with signal 11 (SIGSEGV) in its init"), "\(text.stdout)")
    }

    @Test func inspectOfAPluginThatHangsInInitEndsAfterTheBound() throws {
        let (home, config) = try Self.home()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let start = ContinuousClock.now
        let run = try DoctorAndPluginsTests.run(["plugins", "inspect", "test-hangs-in-init", "--json", "--config", config,
                                                 "--plugin-path", Self.hangs], home: home, timeout: 20)
        let elapsed = ContinuousClock.now - start
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.json?["status"]?.string == "timed_out", "\(run.stdout)")
        #expect(run.json?["problems"]?[0]?["path"]?.string == Self.hangs)
        #expect(elapsed < .seconds(10), "plugins inspect took \(elapsed)")
    }
}
