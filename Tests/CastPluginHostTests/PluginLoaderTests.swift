import CastLogging
import CCastPluginABI
import CastPluginHost
import CastTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real loader on real `.so` files: each refusal is one clear error line and the host goes on.
@Suite struct PluginLoaderTests {
    static let good = BuiltProducts.library("TestPluginGood")
    static let allowAll: @Sendable (inout PluginHostConfiguration) -> Void = {
        $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
    }

    /// Loads `refused` then the good plugin; expects exactly one PluginHost error naming the file.
    func expectRefusal(_ refused: String, kind: PluginLoadError.Kind, mentions: [String],
                       _ adjust: @escaping (inout PluginHostConfiguration) -> Void = PluginLoaderTests.allowAll) throws {
        let rig = try PluginHostRig(paths: [refused, Self.good], adjust)
        rig.host.loadAll()
        let errors = rig.hostErrors
        #expect(errors.count == 1, "\(errors.map(\.message))")
        let line = errors.first?.message ?? ""
        #expect(line.contains(refused), "\(line)")
        for m in mentions { #expect(line.contains(m), "\(line) should mention \(m)") }
        #expect(rig.host.problems.map(\.kind) == [kind])
        // The host went on: the good plugin after it is loaded and initialised.
        #expect(rig.host.plugins.map(\.id) == ["test-good"])
        #expect(rig.records(class: "TestPluginGood").map(\.message) == ["test-good initialised"])
    }

    @Test func goodPluginLoadsWithItsFeaturesAndLogsThroughTheHost() throws {
        let rig = try PluginHostRig(paths: [Self.good], Self.allowAll)
        rig.host.loadAll()
        #expect(rig.hostErrors.isEmpty)
        let plugin = try #require(rig.host.plugins.first)
        #expect(plugin.id == "test-good")
        #expect(plugin.version == "1.0")
        #expect(plugin.path == Self.good)
        #expect(rig.host.features.map { "\($0.kind):\($0.id)" } == ["discovery:test-discovery", "channel:test-channel"])
        #expect(rig.host.feature(.discovery, id: "test-discovery")?.declarations == ["_googlecast._tcp"])
        // The plugin's init logged under its own class, with its field and source location, via the host's filter.
        let record = try #require(rig.records(class: "TestPluginGood").first)
        #expect(record.level == .info)
        #expect(record.fields["config"] == "{}")
        #expect(record.fields["plugin"] == "test-good")
        #expect(record.file.hasSuffix("good.c"))
        #expect(record.function == "init")
        #expect(record.line > 0)
    }

    @Test func pluginLogsObeyTheFilter() throws {
        let rig = try PluginHostRig(paths: [Self.good], Self.allowAll)
        try rig.logSystem.applyRules("TestPlugin*:warning", source: "test")
        rig.host.loadAll()
        #expect(rig.records(class: "TestPluginGood").isEmpty)
    }

    @Test func wrongABIMajorIsRefused() throws {
        try expectRefusal(BuiltProducts.library("TestPluginBadMajor"), kind: .abiMajor, mentions: ["2.0", "speaks 1.\(CASTLINE_PLUGIN_ABI_MINOR)", "rebuild"])
    }

    @Test func newerABIMinorIsRefused() throws {
        try expectRefusal(BuiltProducts.library("TestPluginNewerMinor"), kind: .abiMinor, mentions: ["1.\(CASTLINE_PLUGIN_ABI_MINOR + 1)", "newer than this castline's 1.\(CASTLINE_PLUGIN_ABI_MINOR)"])
    }

    @Test func missingEntrySymbolIsRefused() throws {
        try expectRefusal(BuiltProducts.library("TestPluginNoEntry"), kind: .missingEntry, mentions: ["castline_plugin_v1_describe"])
    }

    @Test func initFailureDisablesThePluginWithItsReason() throws {
        try expectRefusal(BuiltProducts.library("TestPluginInitFails"), kind: .initFailed,
                          mentions: ["test-init-fails", "init failed", "/nonexistent/test-device.conf"])
    }

    @Test func notASharedObjectIsRefused() throws {
        let folder = ScratchFolder("notso")
        defer { folder.remove() }
        let path = folder.path + "/libgarbage.so"
        let f = fopen(path, "w")!
        fputs("this is not an ELF file\n", f)
        fclose(f)
        try expectRefusal(path, kind: .openFailed, mentions: ["cannot be opened"])
    }

    @Test func worldWritableFolderIsRefused() throws {
        let folder = ScratchFolder("ww")
        defer { folder.remove() }
        let copy = folder.copy(Self.good, as: "libcopy.so")
        chmod(folder.path, 0o777)
        try expectRefusal(copy, kind: .unsafeFile, mentions: ["world-writable", "chmod o-w \(folder.path)"])
    }

    @Test func worldWritableFileIsRefused() throws {
        let folder = ScratchFolder("wwf")
        defer { folder.remove() }
        let copy = folder.copy(Self.good, as: "libcopy.so", mode: 0o777)
        try expectRefusal(copy, kind: .unsafeFile, mentions: ["world-writable", "chmod o-w \(copy)"])
    }

    @Test(.enabled(if: TestEnvironment.isRoot, "needs root: chown of a file to another user"))
    func fileOwnedByAnotherUserIsRefused() throws {
        let folder = ScratchFolder("owner")
        defer { folder.remove() }
        let copy = folder.copy(Self.good, as: "libcopy.so")
        // uid 65534 (nobody): neither root nor us, whoever runs the tests.
        try #require(chown(copy, 65534, 65534) == 0, "chown to uid 65534: errno \(errno)")
        try expectRefusal(copy, kind: .unsafeFile, mentions: ["owned by uid 65534"])
    }

    @Test func folderSearchFindsPluginsAndTheSamePluginTwiceIsSkipped() throws {
        let first = ScratchFolder("first")
        let second = ScratchFolder("second")
        defer { first.remove(); second.remove() }
        first.copy(Self.good, as: "libgood.so")
        second.copy(Self.good, as: "libgood.so")
        second.copy(BuiltProducts.library("TestPluginNoEntry"), as: "README.txt") // not *.so: ignored
        let rig = try PluginHostRig(paths: [first.path, second.path], Self.allowAll)
        rig.host.loadAll()
        #expect(rig.host.plugins.map(\.path) == [first.path + "/libgood.so"])
        #expect(rig.host.problems.map(\.kind) == [.duplicate])
        #expect(rig.host.problems.first?.description.contains("already loaded from \(first.path)/libgood.so") == true)
        #expect(rig.hostErrors.isEmpty)
    }

    @Test("the same file named on its own and found in its folder is one plugin, not a duplicate")
    func theSameFileTwiceIsOnePlugin() throws {
        let folder = ScratchFolder("same")
        defer { folder.remove() }
        let path = folder.copy(Self.good, as: "libgood.so")
        let rig = try PluginHostRig(paths: [path, folder.path], Self.allowAll)
        rig.host.loadAll()
        #expect(rig.host.plugins.map(\.path) == [path])
        #expect(rig.host.problems.isEmpty && rig.hostWarnings.isEmpty && rig.hostErrors.isEmpty)
    }

    @Test func duplicateFeatureIDsAreResolvedByRankInEitherOrder() throws {
        let ranked = BuiltProducts.library("TestPluginRanked")
        for order in [[Self.good, ranked], [ranked, Self.good]] {
            let rig = try PluginHostRig(paths: order, Self.allowAll)
            rig.host.loadAll()
            #expect(rig.hostErrors.isEmpty)
            #expect(rig.host.feature(.discovery, id: "test-discovery")?.pluginID == "test-ranked")
            #expect(rig.host.shadowedFeatures.map(\.pluginID) == ["test-good"])
            #expect(rig.host.features(of: .discovery).count == 1)
            #expect(rig.host.feature(.channel, id: "test-channel")?.pluginID == "test-good")
            #expect(rig.records(class: "PluginHost").contains { $0.message.contains("is shadowed by plugin test-ranked (rank 10)") })
        }
    }

    @Test func equalRanksKeepTheFirstInSearchOrder() throws {
        let folder = ScratchFolder("equal")
        defer { folder.remove() }
        // Same feature ids and ranks under a second plugin id is not possible with one .so, so the
        // same file under two paths is a duplicate *plugin*: the first path wins.
        let copy = folder.copy(Self.good, as: "libgood-copy.so")
        let rig = try PluginHostRig(paths: [copy, Self.good], Self.allowAll)
        rig.host.loadAll()
        #expect(rig.host.plugins.map(\.path) == [copy])
    }

    @Test func environmentAndConfigPathsComeInOrder() {
        let path = PluginSearchPath(commandLine: ["/cli"], environment: ["CASTLINE_PLUGIN_PATH": "/env1::/env2"],
                                    config: ["/conf"], executableFolder: "/opt/castline/bin")
        #expect(path.entries.map(\.path) == ["/cli", "/env1", "/env2", "/conf", "/opt/castline/bin", "/opt/castline/bin/../lib/castline/plugins"])
        #expect(path.entries.map(\.source) == [.commandLine, .environment, .environment, .config, .defaultFolder, .defaultFolder])
        #expect(path.entries[4].namePrefix == "libCastlinePlugin")
    }

    @Test func missingExplicitFolderIsAWarningNotAnError() throws {
        let rig = try PluginHostRig(paths: ["/nonexistent/castline-plugins", Self.good], Self.allowAll)
        rig.host.loadAll()
        #expect(rig.hostErrors.isEmpty)
        #expect(rig.records(class: "PluginHost").contains { $0.level == .warning && $0.message.contains("/nonexistent/castline-plugins") })
        #expect(rig.host.plugins.count == 1)
    }

    /// A plugin that does not ship with castline: a warning (not an error: the config chose).
    @Test func channelNamespaceNotAllowedNamesTheConfigKey() throws {
        let rig = try PluginHostRig(paths: [Self.good]) // no namespaces allowed
        rig.host.loadAll()
        let line = try #require(rig.hostWarnings.first?.message)
        #expect(rig.hostWarnings.count == 1 && rig.hostErrors.isEmpty)
        #expect(line.contains("urn:x-cast:org.castline.test"))
        #expect(line.contains("channels.allowed_namespaces"))
        #expect(rig.host.feature(.channel, id: "test-channel") == nil)
        #expect(rig.host.feature(.discovery, id: "test-discovery") != nil)
    }

    @Test func discoveryServiceNotAllowedNamesTheConfigKey() throws {
        let rig = try PluginHostRig(paths: [Self.good]) {
            $0.allowedServiceTypes = []
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
        }
        rig.host.loadAll()
        let line = try #require(rig.hostWarnings.first?.message)
        #expect(rig.hostErrors.isEmpty)
        #expect(line.contains("\"_googlecast._tcp\""))
        #expect(line.contains("discovery.allowed_services"))
        #expect(rig.host.feature(.discovery, id: "test-discovery") == nil)
    }

    /// The example channels ship beside the binary and declare namespaces no default config
    /// allows: one info record that says how to allow it, no warning, no error.
    @Test("a shipped example channel whose namespace is not allowed is an info record with the key to add")
    func shippedExampleNotAllowedIsInfo() throws {
        let ping = BuiltProducts.library("CastlinePluginPingChannel")
        try #require(PluginSearchPath.isFirstParty(ping), "the test runner sits beside the built plugins")
        let rig = try PluginHostRig(paths: [ping]) // no namespaces allowed
        rig.host.loadAll()
        #expect(rig.hostErrors.isEmpty && rig.hostWarnings.isEmpty, "\(rig.hostErrors.map(\.message)) \(rig.hostWarnings.map(\.message))")
        let notes = rig.records(class: "PluginHost").filter { $0.level == .info && $0.message.contains("channels.allowed_namespaces") }
        #expect(notes.count == 1 && notes[0].message.contains("urn:x-cast:org.castline.example.ping"), "\(notes.map(\.message))")
        #expect(rig.host.problems.map(\.kind) == [.notAllowed])
    }

    @Test func disabledPluginIsNotInitialised() throws {
        let rig = try PluginHostRig(paths: [Self.good]) { $0.disabledPlugins = ["test-good"] }
        rig.host.loadAll()
        #expect(rig.host.plugins.isEmpty)
        #expect(rig.records(class: "TestPluginGood").isEmpty)
        #expect(rig.host.problems.map(\.kind) == [.disabled])
    }
}
