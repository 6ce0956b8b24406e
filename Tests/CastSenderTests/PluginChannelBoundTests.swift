import CastCore
import CastLogging
@testable import CastPluginHost
import CastPluginSession
import CastSender
import CastTestSupport
import Testing

/// A channel plugin that blocks in `on_message` (`TestPluginBlocks`), on a real session with the
/// simulator over loopback TLS: after the bound it is named in an error record, disabled and its
/// channel torn down, and `close` returns without waiting on the plugin.
@Suite struct PluginChannelBoundTests {
    static let blocks = BuiltProducts.library("TestPluginBlocks")

    func host(rig: SenderRig, bound: Double, blockMs: Int) -> PluginHost {
        let host = PluginHost(configuration: PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: [Self.blocks], executableFolder: nil),
            allowedNamespaces: ["urn:x-cast:org.castline.test"], pluginConfigs: ["test-blocks": #"{"block_ms": \#(blockMs)}"#],
            callTimeout: bound), logSystem: rig.logSystem)
        host.loadAll()
        return host
    }

    @Test func aChannelThatBlocksInOnMessageIsDisabledAfterTheBoundAndItsTeardownIsBounded() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: "CA571E00").startSession(on: rig.device())
            let host = host(rig: rig, bound: 0.3, blockMs: 8000)
            let channel = try await host.openChannel(id: "test-blocking-channel", on: session)
            let start = ContinuousClock.now
            // The PING goes out; the simulator's echo comes back into on_message, which blocks 8 s.
            let poked = try await channel.command(["do": "poke"]).get()
            #expect(poked["sent"] == 0)
            #expect(await pollUntil(timeout: 30) { channel.overrun != nil })
            let overrun = try #require(channel.overrun)
            #expect(overrun.call == "on_message")
            // Noticed by the watchdog (a thread of its own) after the bound plus a tick, while
            // on_message still ran (8 s).
            #expect(overrun.elapsed >= 0.3 && overrun.elapsed < 5, "\(overrun)")
            #expect(ContinuousClock.now - start >= .milliseconds(300))

            let errors = rig.logRecords.filter { $0.className == "PluginChannel" && $0.level == .error }
            #expect(errors.count == 1, "\(errors.map(\.message))")
            let error = try #require(errors.first)
            #expect(error.fields["plugin"] == .string("test-blocks"))
            #expect(error.fields["feature"] == .string("test-blocking-channel"))
            #expect(error.fields["call"] == .string("on_message"))
            #expect(error.fields["problem"] == .string("timed_out"))
            #expect(error.fields["path"] == .string(Self.blocks))
            #expect(error.message.contains("channel test-blocking-channel's on_message did not return within 0.3 s"), "\(error.message)")
            #expect(host.problems.map(\.kind) == [.timedOut])

            // Teardown never waits on the plugin, which is still inside on_message.
            let closing = ContinuousClock.now
            await channel.close()
            #expect(ContinuousClock.now - closing < .seconds(6), "the plugin blocks 8 s; close must not wait for it")
            #expect(await channel.command(["do": "poke"]) == .failure(PluginCommandError(
                "channel test-blocking-channel was disabled: its on_message did not return within 0.3 s", unavailable: true)))
            // The plugin is disabled: no new channel of it opens.
            await #expect(throws: PluginLoadError.self) { try await host.openChannel(id: "test-blocking-channel", on: session) }
            // The session goes on.
            #expect(!session.hasEnded)
            await session.end(stopCasting: true)
        }
    }

    @Test func closeWaitsOnlyTheBoundForAPluginThatIsInsideACall() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: "CA571E00").startSession(on: rig.device())
            // A bound longer than the test's patience for on_message, so close meets the call first.
            let host = host(rig: rig, bound: 1, blockMs: 8000)
            let channel = try await host.openChannel(id: "test-blocking-channel", on: session)
            _ = try await channel.command(["do": "poke"]).get()
            // Wait until on_message runs (the echo arrived), then close at once.
            #expect(await pollUntil(timeout: 30) { channel.callInProgress == "on_message" })
            let closing = ContinuousClock.now
            await channel.close()
            let took = ContinuousClock.now - closing
            #expect(took < .seconds(6), "close took \(took); the plugin blocks 8 s")
            #expect(channel.overrun != nil)
            let errors = rig.logRecords.filter { $0.className == "PluginChannel" && $0.level == .error }
            #expect(errors.count == 1, "\(errors.map(\.message))")
            await session.end(stopCasting: true)
        }
    }
}
