import CastCore
import CastTestSupport
import Foundation
import Testing

/// `castline plugins` and `castline doctor` run as the built binary: the plugins SwiftPM built next
/// to it, configs written to a scratch folder, no setting inherited from the caller's environment.
@Suite struct DoctorAndPluginsTests {
    static let castline = BuiltProducts.folder + "/castline"

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        var json: JSONValue? { try? JSONValue.parse(stdout) }
    }

    /// Runs castline with stdout and stderr read apart (both drained while it runs); killed after `timeout` seconds.
    /// HOME points at `home` (no ~/.config/castline/castline.yaml) and CASTLINE_* are unset;
    /// `environment` is added last.
    static func run(_ arguments: [String], home: String, environment: [String: String] = [:], timeout: Double = 30) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: castline)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASTLINE_") && $0.key != "XDG_CONFIG_HOME" }
        env["HOME"] = home
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        group.wait()
        process.waitUntilExit()
        watchdog.cancel()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }

    /// A fresh scratch folder (HOME for the run, configs).
    static func scratch() -> String {
        var template = Array("/tmp/castline-e2e-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func checks(_ run: Run) -> [JSONValue] { run.json?["checks"]?.array ?? [] }

    // MARK: plugins

    @Test func pluginsListJSONShowsTheBuiltPluginsAndTheirFeatures() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try Self.run(["plugins", "list", "--json"], home: home)
        #expect(run.status == 0, "\(run.stderr)")
        let plugins = try #require(run.json?["plugins"]?.array, "\(run.stdout)")
        func feature(_ plugin: String) -> JSONValue? {
            plugins.first { $0["id"]?.string == plugin }?["features"]?.array?.first
        }
        let expected: [(plugin: String, kind: String, id: String)] = [
            ("json-sink", "log_sink", "json"), ("journald-sink", "log_sink", "journald"),
            ("media-formats", "media_format", "manifest"), ("avahi-discovery", "discovery", "avahi"),
            ("ping-channel", "channel", "example-ping"),
        ]
        for e in expected {
            let f = try #require(feature(e.plugin), "plugin \(e.plugin) missing from \(run.stdout)")
            #expect(f["kind"]?.string == e.kind)
            #expect(f["id"]?.string == e.id)
            #expect(f["rank"]?.int != nil)
        }
        #expect(feature("avahi-discovery")?["declarations"]?.array?.contains(.string("_googlecast._tcp")) == true)
        #expect(feature("ping-channel")?["declarations"]?.array == [.string("urn:x-cast:org.castline.example.ping")])
        // Its namespace is not allowed by default: listed, refused, and named in problems.
        #expect(feature("ping-channel")?["status"]?.string == "not_allowed")
        let problems = run.json?["problems"]?.array ?? []
        #expect(problems.contains { $0["pluginId"]?.string == "ping-channel" && $0["kind"]?.string == "not_allowed" })
        let plugin = try #require(plugins.first { $0["id"]?.string == "json-sink" })
        for key in ["version", "description", "license", "path"] { #expect(plugin[key]?.string?.isEmpty == false, "\(key)") }
        #expect(plugin["abiMinor"]?.int != nil)
        let searchPath = run.json?["searchPath"]?.array ?? []
        #expect(searchPath.contains { $0["source"]?.string == "default" && $0["exists"]?.bool == true })
    }

    @Test func allowingANamespaceActivatesTheChannelFeature() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try Self.write("channels:\n  allowed_namespaces: [urn:x-cast:org.castline.example.ping]\n", to: home + "/allow.yaml")
        let run = try Self.run(["plugins", "list", "--json", "--config", home + "/allow.yaml"], home: home)
        #expect(run.status == 0, "\(run.stderr)")
        let ping = run.json?["plugins"]?.array?.first { $0["id"]?.string == "ping-channel" }
        #expect(ping?["features"]?[0]?["status"]?.string == "active", "\(run.stdout)")
    }

    @Test func inspectShowsTheLogSinkFeature() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let text = try Self.run(["plugins", "inspect", "json-sink"], home: home)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("log_sink:json"), "\(text.stdout)")
        #expect(text.stdout.contains("id:") && text.stdout.contains("json-sink"))
        let json = try Self.run(["plugins", "inspect", "json-sink", "--json"], home: home)
        #expect(json.status == 0)
        #expect(json.json?["id"]?.string == "json-sink", "\(json.stdout)")
        #expect(json.json?["status"]?.string == "loaded")
        #expect(json.json?["features"]?[0]?["kind"]?.string == "log_sink")
        #expect(json.json?["features"]?[0]?["id"]?.string == "json")
    }

    @Test func inspectByPathLoadsThatFile() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try Self.run(["plugins", "inspect", BuiltProducts.library("CastlinePluginMediaFormats"), "--json"], home: home)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.json?["id"]?.string == "media-formats", "\(run.stdout)")
        #expect(run.json?["features"]?[0]?["kind"]?.string == "media_format")
    }

    @Test func inspectOfAnUnknownPluginExits1() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try Self.run(["plugins", "inspect", "nosuch"], home: home)
        #expect(run.status == 1)
        #expect(run.stderr.contains("nosuch"), "\(run.stderr)")
    }

    @Test func inspectOfAFileThatIsNoPluginExits1() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try Self.run(["plugins", "inspect", BuiltProducts.library("TestPluginBadMajor"), "--json"], home: home)
        #expect(run.status == 1)
        #expect(run.json?["problems"]?[0]?["kind"]?.string == "abi_major", "\(run.stdout)")
    }

    // MARK: doctor

    @Test func doctorNamesAMissingDiscoveryInterface() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let config = home + "/castline.yaml"
        try Self.write("discovery:\n  interfaces: [nosuch0]\n", to: config)
        let run = try Self.run(["doctor", "--json", "--config", config, "--timeout", "0.5"], home: home)
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        #expect(run.json?["ok"]?.bool == false)
        let errors = Self.checks(run).filter { $0["status"]?.string == "error" }
        let named = errors.first { ($0["name"]?.string ?? "").contains("nosuch0") }
        #expect(named?["detail"]?.string?.contains("nosuch0") == true, "\(run.stdout)")
        #expect(named?["fix"]?.string?.contains("discovery.interfaces") == true)
        // Every check has the four keys.
        for check in Self.checks(run) {
            #expect(check["name"]?.string != nil && check["detail"]?.string != nil && check["fix"] != nil)
            #expect(["ok", "warning", "error", "skipped"].contains(check["status"]?.string ?? ""))
        }

        let text = try Self.run(["doctor", "--config", config, "--timeout", "0.5"], home: home)
        #expect(text.status == 1)
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("✘ interface nosuch0:") }, "\(text.stdout)")
        #expect(lines[index + 1].hasPrefix("  fix: "))
    }

    @Test func doctorReportsAYAMLErrorWithItsPosition() throws {
        let home = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let config = home + "/broken.yaml"
        try Self.write("devices:\n  - name: Lobby\n    host: [oops\n", to: config)
        let run = try Self.run(["doctor", "--json", "--config", config, "--timeout", "0.5"], home: home)
        // Reported as a check (exit 1), not the exit 2 of the other commands: the other checks still run.
        #expect(run.status == 1, "\(run.stdout)\n\(run.stderr)")
        let check = try #require(Self.checks(run).first { $0["name"]?.string == "config" }, "\(run.stdout)")
        #expect(check["status"]?.string == "error")
        let detail = check["detail"]?.string ?? ""
        #expect(detail.contains(try Regex("\(NSRegularExpression.escapedPattern(for: config)):[0-9]+:[0-9]+: error")), "\(detail)")
        #expect(Self.checks(run).contains { $0["name"]?.string == "plugins" })

        // The other commands refuse the file with exit 2.
        let list = try Self.run(["plugins", "list", "--config", config], home: home)
        #expect(list.status == 2)
        #expect(list.stderr.contains(config + ":"))
    }
}

/// `castline nearby permission` and the doctor's nearby check, run as the built binary.
@Suite struct NearbyPermissionCommandTests {
    @Test func grantRevokeStatusPersistAndTheDoctorSaysWhatAnnounceJobsNeeds() throws {
        let home = DoctorAndPluginsTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let state = home + "/state"
        let status = try DoctorAndPluginsTests.run(["nearby", "permission", "status", "--json", "--state-dir", state], home: home)
        #expect(status.status == 0 && status.json?["permission"]?.string == "not determined", "\(status.stdout)\(status.stderr)")

        let config = home + "/castline.yaml"
        try DoctorAndPluginsTests.write("discovery:\n  autostart: false\nnearby:\n  state_dir: \(state)\n  announce_jobs: true\n", to: config)
        var doctor = try DoctorAndPluginsTests.run(["doctor", "--json", "--config", config, "--timeout", "0.2"], home: home)
        var check = try #require(DoctorAndPluginsTests.checks(doctor).first { $0["name"]?.string == "nearby" }, "\(doctor.stdout)")
        #expect(check["status"]?.string == "error")
        #expect(check["fix"]?.string?.contains("castline nearby permission grant --state-dir \(state)") == true)

        let grant = try DoctorAndPluginsTests.run(["nearby", "permission", "grant", "--config", config], home: home)
        #expect(grant.status == 0 && grant.stdout.contains("granted") && grant.stdout.contains(state), "\(grant.stdout)\(grant.stderr)")
        doctor = try DoctorAndPluginsTests.run(["doctor", "--json", "--config", config, "--timeout", "0.2"], home: home)
        check = try #require(DoctorAndPluginsTests.checks(doctor).first { $0["name"]?.string == "nearby" })
        #expect(check["status"]?.string == "ok" && check["detail"]?.string?.contains("granted") == true)

        let revoke = try DoctorAndPluginsTests.run(["nearby", "permission", "revoke", "--state-dir", state, "--json"], home: home)
        #expect(revoke.json?["permission"]?.string == "revoked")

        // Publishing without permission: exit 4 and the command to run; oversize content: exit 64, before anything else.
        let refused = try DoctorAndPluginsTests.run(["nearby", "publish", "--state-dir", state, "hello"], home: home)
        #expect(refused.status == 4 && refused.stderr.contains("castline nearby permission grant"), "\(refused.stderr)")
        let big = String(repeating: "x", count: 1025)
        let oversize = try DoctorAndPluginsTests.run(["nearby", "publish", "--state-dir", state, big], home: home)
        #expect(oversize.status == 64 && oversize.stderr.contains("1025 bytes; the limit is 1024 bytes"), "\(oversize.stderr)")
    }

    @Test func aStateFolderThatCannotBeWrittenIsExit1WithTheReason() throws {
        let home = DoctorAndPluginsTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try DoctorAndPluginsTests.write("not a folder", to: home + "/file")
        let run = try DoctorAndPluginsTests.run(["nearby", "permission", "grant", "--state-dir", home + "/file/state"], home: home)
        #expect(run.status == 1 && run.stderr.contains("cannot create the folder"), "\(run.stderr)")
    }
}
