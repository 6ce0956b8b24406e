import CastCore
import CastLogging
@testable import CastPluginHost
import CastPluginSession
import CastSender
import CastTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `plugins.isolated`: a channel plugin (`TestPluginCrashesInChannel`) run in the built
/// `castline plugin-host`, on a live session with the simulator over loopback TLS. Its segfault
/// in on_message ends the helper, not this process; the plugin is restarted and the channel
/// works again.
@Suite struct IsolatedChannelTests {
    static let crashes = BuiltProducts.library("TestPluginCrashesInChannel")
    static let castline = BuiltProducts.folder + "/castline"

    func host(rig: SenderRig) -> PluginHost {
        var configuration = PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: [Self.crashes], executableFolder: nil),
            allowedNamespaces: ["urn:x-cast:org.castline.test"], scanner: PluginScanner(executable: Self.castline, timeout: 5),
            callTimeout: 5)
        configuration.isolatedPlugins = ["test-crashes-in-channel"]
        let host = PluginHost(configuration: configuration, logSystem: rig.logSystem)
        host.loadAll()
        return host
    }

    @Test func aSegfaultInOnMessageEndsTheHelperNotTheHostAndTheChannelWorksAgain() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: "CA571E00").startSession(on: rig.device())
            let host = host(rig: rig)
            #expect(host.problems.isEmpty, "\(host.problems)")
            let helper = try #require(host.isolatedPlugin("test-crashes-in-channel"))
            let channel = try await host.openChannel(id: "test-crashing-channel", on: session)

            // The plugin runs in the helper, and its messages go through the real session.
            let firstPID = try #require(try await channel.command(["do": "pid"]).get()["pid"]?.int)
            #expect(firstPID != Int64(getpid()))
            #expect(helper.helperPID.map(Int64.init) == firstPID)
            #expect(channel.helperPID.map(Int64.init) == firstPID)
            #expect(try await channel.command(["do": "echo"]).get()["type"] == "PING")

            // The echo of CRASH segfaults on_message in the helper: the pending command fails,
            // naming the plugin and the signal; the crash is one error record.
            let crashed = await channel.command(["do": "crash"], timeout: .seconds(30))
            guard case .failure(let failure) = crashed else {
                Issue.record("the crash command answered: \(crashed)")
                return
            }
            #expect(failure.reason.contains("plugin test-crashes-in-channel crashed with signal 11 (SIGSEGV)"), "\(failure)")
            if helper.helperPID == nil {
                // Down until the restart: the channel reports unavailable.
                let meanwhile = await channel.command(["do": "pid"])
                if case .failure(let error) = meanwhile { #expect(error.reason.hasPrefix("channel unavailable")) }
            }
            let errors = rig.logRecords.filter { $0.className == "IsolatedPlugin" && $0.level == .error }
            #expect(errors.count == 1, "\(errors.map(\.message))")
            #expect(errors.first?.fields["plugin"] == .string("test-crashes-in-channel"))
            #expect(errors.first?.fields["signal"] == .string("SIGSEGV"))
            #expect(errors.first?.fields["problem"] == .string("crashed"))
            #expect(errors.first?.fields["path"] == .string(Self.crashes))
            // The helper's crash handler: the callback that was running, a backtrace through the
            // plugin's library, and the plugin's last record (logged just before the crash, when
            // the sink's queue had not sent it yet) in the host's log, once.
            #expect(errors.first?.fields["callback"] == "on_message")
            let backtrace = errors.first?.fields["backtrace"]?.description ?? ""
            #expect(backtrace.contains("(libTestPluginCrashesInChannel.so + 0x"), "\(backtrace)")
            // The callback named with its offset, although it is static (in no dynamic symbol table).
            #expect(backtrace.split(separator: "\n").first { $0.contains("(libTestPluginCrashesInChannel.so + 0x") }?
                .hasPrefix("channel_on_message + ") == true, "\(backtrace)")
            #expect(errors.first?.message.contains("SIGSEGV) in on_message") == true, "\(errors.first?.message ?? "")")
            let last = try #require(await pollValue(timeout: 10) { () async -> [LogRecord]? in
                let found = rig.logRecords.filter { $0.className == "CrashingChannel" }
                return found.isEmpty ? nil : found
            })
            #expect(last.map(\.message) == ["CRASH received: dereferencing NULL"])
            #expect(last.first?.fields["role"] == "plugin-helper" && last.first?.fields["pid"] == .int(firstPID))

            // Restarted with its channel opened again: a new helper, and the channel works.
            let back = await pollValue(timeout: 30) { () async -> Int64? in
                guard case .success(let reply) = await channel.command(["do": "pid"], timeout: .seconds(5)) else { return nil }
                return reply["pid"]?.int
            }
            let secondPID = try #require(back)
            #expect(secondPID != firstPID)
            #expect(try await channel.command(["do": "echo"]).get()["type"] == "PING")
            #expect(rig.logRecords.contains { $0.className == "IsolatedPlugin" && $0.message.contains("helper process restarted") })

            await channel.close()
            host.shutdown()
            // The helper ends with the host (it exits when its socket closes), reaped by its pid.
            #expect(helper.helperPID == nil)
            #expect(kill(pid_t(secondPID), 0) != 0)
            await session.end(stopCasting: true)
        }
    }

    /// The crash handler writes on the socket that the helper's log sink thread writes on. A
    /// plugin that logs without pause on another thread when it crashes must still get its
    /// report through whole: never inside a frame that thread is halfway through (which the host
    /// would read as a malformed frame, losing the report).
    @Test func aCrashWhileAnotherThreadLogsStillReportsTheCallbackAndTheStack() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: "CA571E00").startSession(on: rig.device())
            let host = host(rig: rig)
            #expect(host.problems.isEmpty, "\(host.problems)")
            let channel = try await host.openChannel(id: "test-crashing-channel", on: session)
            for round in 1...3 {
                let crashed = await channel.command(["do": "noisy-crash"], timeout: .seconds(30))
                guard case .failure(let failure) = crashed else {
                    Issue.record("round \(round): the crash command answered: \(crashed)")
                    return
                }
                #expect(failure.reason.contains("crashed with signal 11 (SIGSEGV)"), "\(failure)")
                let errors = rig.logRecords.filter { $0.className == "IsolatedPlugin" && $0.level == .error }
                #expect(errors.count == round, "\(errors.map(\.message))")
                #expect(errors.last?.fields["callback"] == "on_message", "round \(round): \(errors.last?.message ?? "")")
                let backtrace = errors.last?.fields["backtrace"]?.description ?? ""
                #expect(backtrace.contains("channel_on_message + "), "round \(round): \(backtrace)")
                let back = await pollValue(timeout: 30) { () async -> Int64? in
                    guard case .success(let reply) = await channel.command(["do": "pid"], timeout: .seconds(5)) else { return nil }
                    return reply["pid"]?.int
                }
                #expect(back != nil, "round \(round): the channel did not come back")
            }
            // The premise: the noisy thread's records were on their way (its thread runs 300 ms
            // before each crash; on a loaded machine a round's may all die in the sink's queue).
            #expect(rig.logRecords.contains { $0.className == "NoisyChannel" })
            await channel.close()
            host.shutdown()
            await session.end(stopCasting: true)
        }
    }

    static let blocks = BuiltProducts.library("TestPluginBlocks")

    @Test func aHelperWhoseCallbackNeverReturnsIsKilledAndRestartedAndTheChannelWorksAgain() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: "CA571E00").startSession(on: rig.device())
            var configuration = PluginHostConfiguration(
                searchPath: PluginSearchPath(commandLine: [Self.blocks], executableFolder: nil),
                allowedNamespaces: ["urn:x-cast:org.castline.test"], scanner: PluginScanner(executable: Self.castline, timeout: 5),
                callTimeout: 1)
            configuration.isolatedPlugins = ["test-blocks"]
            configuration.pluginConfigs = ["test-blocks": #"{"block_ms": 60000}"#]
            let host = PluginHost(configuration: configuration, logSystem: rig.logSystem)
            host.loadAll()
            // Isolated, its discovery is refused (channels, media formats and sinks run there).
            #expect(host.problems.count == 1 && host.problems.allSatisfy { "\($0)".contains("add test-blocks to plugins.in_process") },
                    "\(host.problems)")
            let helper = try #require(host.isolatedPlugin("test-blocks"))
            let firstPID = try #require(helper.helperPID)
            let channel = try await host.openChannel(id: "test-blocking-channel", on: session)

            // The poke's PING comes back from the simulator's app; the plugin's on_message then
            // sleeps 60 s in the helper. The helper answers no ping: killed and restarted.
            #expect(try await channel.command(["do": "poke"]).get()["sent"] == 0)
            let restarted = await pollValue(timeout: 30) { () -> Int32? in
                guard let pid = helper.helperPID, pid != firstPID else { return nil }
                return pid
            }
            #expect(restarted != nil, "the hung helper (pid \(firstPID)) was not replaced")
            #expect(kill(firstPID, 0) != 0, "the hung helper is gone")
            let errors = rig.logRecords.filter { $0.className == "IsolatedPlugin" && $0.level == .error }
            #expect(errors.count == 1, "\(errors.map(\.message))")
            #expect(errors.first?.fields["problem"] == .string("timed_out"))
            #expect(errors.first?.message.contains("did not answer within") == true, "\(errors.first?.message ?? "")")

            // The channel was opened again in the new helper and works (until its next PING).
            let back = await pollValue(timeout: 30) { () async -> Int64? in
                guard case .success(let reply) = await channel.command(["do": "poke"], timeout: .seconds(5)) else { return nil }
                return reply["sent"]?.int
            }
            #expect(back == 0)
            await channel.close()
            host.shutdown()
            await session.end(stopCasting: true)
        }
    }
}
