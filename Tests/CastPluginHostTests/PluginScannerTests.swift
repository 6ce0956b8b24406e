import CastLogging
import CastPluginHost
import CastTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The scan in a child process (the built `castline plugin-scan`) on real `.so` fixtures: a
/// plugin that crashes or hangs in init is reported with its file and left out, and the host
/// (this test process) goes on with the rest.
@Suite struct PluginScannerTests {
    static let castline = BuiltProducts.folder + "/castline"
    static let good = BuiltProducts.library("TestPluginGood")
    static let crashes = BuiltProducts.library("TestPluginCrashesInInit")
    static let hangs = BuiltProducts.library("TestPluginHangsInInit")

    static func rig(_ paths: [String], timeout: Double = 1) throws -> PluginHostRig {
        try PluginHostRig(paths: paths) {
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
            $0.scanner = PluginScanner(executable: castline, timeout: timeout)
            // The scan is under test, not containment: the fixture that comes through runs here.
            $0.inProcessPlugins = ["test-good"]
        }
    }

    /// PIDs of `castline plugin-scan` processes working on `path` (from /proc).
    static func scanners(of path: String) -> [Int32] {
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        var found: [Int32] = []
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), let file = fopen("/proc/\(pid)/cmdline", "r") else { continue }
            var bytes = [UInt8](repeating: 0, count: 4096)
            let n = fread(&bytes, 1, bytes.count, file)
            fclose(file)
            let arguments = bytes[..<n].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains("plugin-scan"), arguments.contains(path) { found.append(pid) }
        }
        return found
    }

    @Test func aCrashInInitIsReportedWithItsSignalAndTheRestLoads() throws {
        let folder = ScratchFolder("crashes")
        defer { folder.remove() }
        let crashes = folder.copy(Self.crashes)
        let rig = try Self.rig([crashes, Self.good])
        rig.host.loadAll()
        #expect(rig.host.problems.map(\.kind) == [.crashed])
        let problem = try #require(rig.host.problems.first)
        #expect(problem.path == crashes)
        #expect(problem.pluginID == "test-crashes-in-init")
        #expect(problem.description.contains("crashed with signal 11 (SIGSEGV) in its init"), "\(problem)")
        let errors = rig.hostErrors.map(\.message)
        #expect(errors == [problem.description])
        // The good plugin after it: scanned, then loaded and initialised here exactly once (its
        // init in the scanner logs nowhere).
        #expect(rig.host.plugins.map(\.id) == ["test-good"])
        #expect(rig.records(class: "TestPluginGood").map(\.message) == ["test-good initialised"])
        #expect(rig.host.feature(.channel, id: "test-channel") != nil)
        // The described plugin stays listable without ever being loaded here.
        #expect(rig.host.declaredPlugin(atPath: crashes)?.id == "test-crashes-in-init")
        #expect(Self.scanners(of: crashes).isEmpty)
    }

    @Test func aHangInInitIsReportedAfterTheBoundAndTheScannerIsKilled() throws {
        // A path of this test's own, so the check for leftover scanners sees only this test's
        // (other tests scan the same fixture at the same time).
        let folder = ScratchFolder("hangs")
        defer { folder.remove() }
        let hangs = folder.copy(Self.hangs)
        let rig = try Self.rig([hangs, Self.good], timeout: 1)
        let start = ContinuousClock.now
        rig.host.loadAll()
        let elapsed = ContinuousClock.now - start
        #expect(rig.host.problems.map(\.kind) == [.timedOut])
        let problem = try #require(rig.host.problems.first)
        #expect(problem.path == hangs)
        #expect(problem.description.contains("its init did not return within 1 s"), "\(problem)")
        #expect(rig.host.plugins.map(\.id) == ["test-good"])
        // The bound held: the init's second, plus process starts and the good plugin's load.
        #expect(elapsed >= .seconds(1))
        #expect(elapsed < .seconds(4), "loadAll took \(elapsed)")
        // Killed by PID and reaped: no scanner of that file is left.
        #expect(Self.scanners(of: hangs).isEmpty)
    }

    @Test func everyOtherRefusalReadsAsWithoutTheScanner() throws {
        for (path, kind) in [(BuiltProducts.library("TestPluginBadMajor"), PluginLoadError.Kind.abiMajor),
                             (BuiltProducts.library("TestPluginNewerMinor"), .abiMinor),
                             (BuiltProducts.library("TestPluginNoEntry"), .missingEntry),
                             (BuiltProducts.library("TestPluginInitFails"), .initFailed)] {
            let scanned = try Self.rig([path])
            scanned.host.loadAll()
            let direct = try PluginHostRig(paths: [path])
            direct.host.loadAll()
            #expect(scanned.host.problems.map(\.kind) == [kind])
            #expect(scanned.host.problems == direct.host.problems, "\(scanned.host.problems) vs \(direct.host.problems)")
        }
    }

    @Test func aScannerThatCannotStartIsAClearRefusal() throws {
        let rig = try PluginHostRig(paths: [Self.good]) {
            $0.scanner = PluginScanner(executable: "/nonexistent/castline", timeout: 1)
        }
        rig.host.loadAll()
        #expect(rig.host.plugins.isEmpty)
        let problem = try #require(rig.host.problems.first)
        #expect(problem.path == Self.good)
        #expect(problem.description.contains("/nonexistent/castline"), "\(problem)")
    }
}
