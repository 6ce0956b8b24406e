import CastCore
import CastLogging
import CastPluginHost
import CastReceiverSim
import CastSender
import CastTestSupport
import Testing

/// Channel plugins loaded from their `.so` files, round-tripping through the simulator's plugin
/// examples app over real loopback TLS; and the host's runtime refusals on a live channel.
@Suite struct PluginChannelTests {
    static let appID = "CA571E00"

    /// A host with the given plugins, allowed their namespaces, logging into the rig's log system.
    func host(_ products: [String], rig: SenderRig, configs: [String: String] = [:]) -> PluginHost {
        let host = PluginHost(configuration: PluginHostConfiguration(
            searchPath: PluginSearchPath(commandLine: products.map(BuiltProducts.library), executableFolder: nil),
            allowedNamespaces: ["urn:x-cast:org.castline.example.echo", "urn:x-cast:org.castline.example.ping", "urn:x-cast:org.castline.test"],
            pluginConfigs: configs), logSystem: rig.logSystem)
        host.loadAll()
        return host
    }

    /// Runs `body` with a session of the plugin examples app on a fresh rig; the rig is stopped
    /// afterwards (ending the session if `body` left it running), also when `body` throws.
    func withSession(_ body: (SenderRig, CastSession) async throws -> Void) async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: Self.appID).startSession(on: rig.device())
            try await body(rig, session)
            await session.end(stopCasting: true)
        }
    }

    @Test func cChannelWithJanssonRoundTripsThroughTheSimulator() async throws {
        try await withSession { rig, session in
            let host = host(["CastlinePluginEchoChannelC"], rig: rig)
            #expect(host.plugins.map(\.id) == ["echo-channel-c"])
            let channel = try await host.openChannel(id: "example-echo", on: session)
            for text in ["hello", "é€ \"quoted\" \n newline"] {
                let result = try await channel.command(["text": .string(text)]).get()
                #expect(result["text"]?.string == text)
                #expect((result["request_id"]?.int ?? 0) > 0)
                #expect((result["round_trip_ms"]?.double ?? -1) >= 0)
            }
            // The plugin's own check of the command object.
            let bad = await channel.command(["txt": "x"])
            #expect(bad == .failure(PluginCommandError("the echo command needs a \"text\" string")))
            await channel.close()
            #expect(await channel.command(["text": "late"]) == .failure(PluginCommandError("channel example-echo is closed")))
        }
    }

    @Test func cChannelTimesOutWithAHostTimerWhenTheAppIsSilent() async throws {
        try await withSenderRig(settings: { settings in
            var app = AppDefinition.pluginExamples
            app.customNamespaces[0].mode = .silent
            settings.apps.append(app)
        }) { rig in
            let manager = rig.manager(appID: Self.appID)
            let session = try await manager.startSession(on: rig.device())
            let host = host(["CastlinePluginEchoChannelC"], rig: rig, configs: ["echo-channel-c": #"{"timeout_ms": 200}"#])
            let channel = try await host.openChannel(id: "example-echo", on: session)
            let result = await channel.command(["text": "anyone?"], timeout: Duration.seconds(10))
            #expect(result == .failure(PluginCommandError("no ECHO reply within 200 ms")))
            let warnings = rig.logRecords.filter { $0.className == "EchoChannelC" && $0.level == .warning }
            #expect(warnings.map(\.message) == ["no ECHO reply within 200 ms"])
            #expect(warnings.first?.fields["requestId"] == LogValue.int(1))
            await channel.close()
            await session.end(stopCasting: true)
        }
    }

    @Test func swiftChannelPingsThroughTheSimulator() async throws {
        try await withSession { rig, session in
            let host = host(["CastlinePluginPingChannel"], rig: rig)
            let channel = try await host.openChannel(id: "example-ping", on: session)
            for n in 1...3 {
                let result = try await channel.command([:]).get()
                #expect(result["pong"] == true)
                #expect(result["request_id"]?.int == Int64(n))
                #expect(result["reply"]?["server"] == "castline-sim")
                #expect((result["rtt_ms"]?.double ?? -1) >= 0)
            }
            await channel.close()
        }
    }

    @Test func undeclaredNamespaceAndInvalidJSONAreRefusedAndTheChannelGoesOn() async throws {
        try await withSession { rig, session in
            let host = host(["TestPluginGood"], rig: rig)
            let channel = try await host.openChannel(id: "test-channel", on: session)
            let undeclared = try await channel.command(["do": "undeclared"]).get()
            #expect(undeclared["status"] == 3) // CASTLINE_ERR_UNDECLARED
            let badJSON = try await channel.command(["do": "badjson"]).get()
            #expect(badJSON["status"] == 2) // CASTLINE_ERR_INVALID_JSON
            let reply = await channel.command(["do": "reply-badjson"])
            #expect(reply == .failure(PluginCommandError("the plugin answered with invalid JSON")))
            // Still working: a real round trip through the simulator's echo.
            let echo = try await channel.command(["do": "echo"]).get()
            #expect(echo["type"] == "PING")
            let errors = rig.logRecords.filter { $0.className == "PluginHost" && $0.level == .error }.map(\.message)
            #expect(errors.count == 3, "\(errors)")
            #expect(errors.contains { $0.contains("undeclared namespace urn:x-cast:org.castline.other") })
            #expect(errors.contains { $0.contains("message on urn:x-cast:org.castline.test") && $0.contains("not valid JSON") })
            #expect(errors.contains { $0.contains("command result") && $0.contains("not valid JSON") })
            await channel.close()
        }
    }
}
