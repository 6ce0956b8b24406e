import CastCore
import CastLogging
@testable import CastPluginHost
import CastPluginSession
import CastReceiverSim
import CastSender
import CastTestSupport
import Foundation
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

    /// The HELLO messages the simulator received on the test namespace, from its frame log.
    static func hellosReceived(frameLog: String) throws -> [JSONValue] {
        let lines: [Substring] = try String(contentsOfFile: frameLog, encoding: .utf8).split(separator: "\n")
        let frames: [JSONValue] = lines.compactMap { try? JSONValue.parse(String($0)) }
        return frames.filter { frame in
            frame["direction"]?.string == "in" && frame["namespace"]?.string == "urn:x-cast:org.castline.test"
                && frame["type"]?.string == "HELLO"
        }
    }

    /// What the SendOnOpen fixture reports: the statuses its open got and the messages it received.
    func report(_ channel: PluginChannel, messages: Int) async throws -> JSONValue? {
        // (JSONValue takes `nil` as JSON null: the closure's type keeps it an Optional.)
        try await pollValue(timeout: 5) { () async throws -> JSONValue? in
            let report = try await channel.command([:]).get()
            guard (report["messages"]?.array?.count ?? 0) >= messages else { return Optional<JSONValue>.none }
            return report
        }
    }

    @Test func messagesSentFromOpenReachTheAppInOrderAndTheirDestinationsAreChecked() async throws {
        let frames = ScratchFolder("open-send")
        defer { frames.remove() }
        let frameLog = frames.path + "/frames.jsonl"
        try await withSenderRig(settings: { $0.frameLogPath = frameLog }) { rig in
            let session = try await rig.manager(appID: Self.appID).startSession(on: rig.device())
            let transport = try #require(await session.application?.transportID)
            let host = host(["TestPluginSendOnOpen"], rig: rig)
            let channel = try await host.openChannel(id: "test-open-send", on: session)
            // The simulator's app echoes what open sent to it (to NULL, then to its transportId), in order.
            let report = try #require(try await report(channel, messages: 2), "the app's echoes of what open sent")
            #expect(report["app"] == 0 && report["transport"] == 0 && report["receiver"] == 0)
            #expect(report["other"] == 1, "sender-0 is neither the app nor receiver-0: CASTLINE_ERR_INVALID_ARGUMENT")
            #expect(report["messages"]?.array?.map { $0["n"] } == [1, 2])
            // receiver-0 got the third; the refused fourth went nowhere.
            let received = try #require(try await pollValue(timeout: 5) { () -> [JSONValue]? in
                let hellos = try Self.hellosReceived(frameLog: frameLog)
                return hellos.count >= 3 ? hellos : nil
            })
            #expect(received.map { $0["destination"]?.string ?? "" } == [transport, transport, "receiver-0"])
            #expect(received.map { $0["payload"]?["n"] } == [1, 2, 3])
            let refusals = rig.logRecords.filter { $0.className == "PluginChannel" && $0.level == .warning }.map(\.message)
            #expect(refusals == ["send on urn:x-cast:org.castline.test refused: destination sender-0 is neither the app's transportId (\(transport)) nor receiver-0"])
            await channel.close()
        }
    }

    @Test func withoutAnAppASendToTheAppIsRefusedAndOneToTheReceiverIsNot() async throws {
        try await withSenderRig { rig in
            let session = try await rig.manager(appID: Self.appID) { $0.joinPolicy = .follow }.startSession(on: rig.device())
            #expect(await session.application == nil, "a device session on an idle device")
            let host = host(["TestPluginSendOnOpen"], rig: rig)
            let channel = try await host.openChannel(id: "test-open-send", on: session)
            let report = try await channel.command([:]).get()
            #expect(report["app"] == 4, "CASTLINE_ERR_NOT_CONNECTED: no app to send to")
            #expect(report["transport"] == -1 && report["receiver"] == 0)
            #expect(report["other"] == 4, "no app runs: whatever transport it names is gone")
            // Two refused sends in a row: one warning (the next report, a minute on, counts the
            // rest), naming the device and the namespace so `logs query --device` finds it.
            let device = await session.device
            let refusals = rig.logRecords.filter { $0.className == "PluginChannel" && $0.level == .warning }
            #expect(refusals.map(\.message) == ["send on urn:x-cast:org.castline.test refused: no app runs on the session (nothing to send to)"])
            let fields = try #require(refusals.first?.fields)
            #expect(fields["device"] == .string(device.id) && fields["namespace"] == "urn:x-cast:org.castline.test")
            #expect(fields["plugin"] == "test-send-on-open" && fields["problem"] == "refused" && fields["suppressed"] == 0)
            let opened = try #require(rig.logRecords.first { $0.className == "PluginChannel" && $0.message == "channel opened" })
            #expect(opened.fields["device"] == .string(device.id))
            await channel.close()
            await session.end(stopCasting: false)
        }
    }

    @Test func eachKindOfProblemIsReportedOnceAMinuteWithTheCountOfTheRest() {
        let context = PluginHostContext.register(pluginID: "p", featureID: "f", role: .plugin, logSystem: LogSystem())
        defer { context.unregister() }
        #expect(context.admitProblem("send", now: 100) == 0)
        for t in 0..<80 { #expect(context.admitProblem("send", now: 100 + Double(t) * 0.1) == nil) }
        #expect(context.admitProblem("input", now: 108) == 0, "a flood of refused sends never hides another kind")
        #expect(context.admitProblem("send", now: 160) == 80)
        #expect(context.admitProblem("send", now: 161) == nil)
    }

    @Test func aSendIsRoutedByItsDestination() {
        typealias R = Result<PluginChannel.Destination, PluginChannel.SendRefusal>
        #expect(PluginChannel.route(destination: nil, appTransportID: "t1", sessionEnded: false) == R.success(.app))
        #expect(PluginChannel.route(destination: "", appTransportID: "t1", sessionEnded: false) == R.success(.app))
        #expect(PluginChannel.route(destination: "t1", appTransportID: "t1", sessionEnded: false) == R.success(.app))
        #expect(PluginChannel.route(destination: "receiver-0", appTransportID: nil, sessionEnded: false) == R.success(.receiver))
        #expect((try? PluginChannel.route(destination: nil, appTransportID: nil, sessionEnded: false).get()) == nil)
        #expect(PluginChannel.route(destination: "t0", appTransportID: "t1", sessionEnded: false).failureStatus == 1)
        #expect(PluginChannel.route(destination: "t0", appTransportID: nil, sessionEnded: false).failureStatus == 4)
        #expect(PluginChannel.route(destination: "receiver-0", appTransportID: "t1", sessionEnded: true).failureStatus == 4)
    }
}

extension Result where Failure == PluginChannel.SendRefusal {
    var failureStatus: Int32? {
        if case .failure(let refusal) = self { return refusal.status }
        return nil
    }
}
