import CastCore
import CastReceiverSim
import CastReceiverSimServer
import Foundation
import Testing

/// The simulator's JSON config: the shipped example loads, and every mistake is reported as
/// `file:line:column: what` pointing at the offending key or value.
@Suite("Simulator config file")
struct SimulatorConfigFileTests {
    static let examplepath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("configs/sim.json").path

    @Test("configs/sim.json loads: two devices, scripted/silent/echo namespaces, 4K HDR and Dolby Vision rules")
    func example() throws {
        let file = try SimulatorConfigFile.load(path: Self.examplepath)
        #expect(file.devices.map(\.name) == ["Living Room TV", "Kitchen Speaker"])
        #expect(file.devices[0].uuid == "5f3d1c0e9a2b4c6d8e7f0a1b2c3d4e5f")
        #expect(file.devices[1].isVideoDevice == false)
        #expect(file.devices[1].address == "127.0.0.2")
        #expect(file.devices[0].tlsProfile == nil, "no \"tls\": the model decides")
        #expect(file.devices[1].tlsProfile == .modern)
        let signage = try #require(file.apps.first { $0.appID == "C0FFEE00" })
        #expect(signage.isMediaPlayer)
        #expect(signage.behaviour(for: "urn:x-cast:com.example.signage") == .scripted([
            "SHOW": ["type": "SHOWING"], "PING_APP": ["type": "PONG_APP"],
        ]))
        #expect(signage.behaviour(for: "urn:x-cast:com.example.telemetry") == .silent)
        #expect(file.apps.first { $0.appID == "ECHO0001" }?.behaviour(for: "urn:x-cast:com.example.echo") == .echo)
        #expect(file.mediaRules.count == 4)
        #expect(file.mediaRules[0].loadError == .init(rawValue: 104))
        #expect(file.mediaRules[1].videoInfo == VideoInfo(width: 3840, height: 2160, hdrType: .dolbyVision))
        #expect(file.mediaRules[2].videoInfo == VideoInfo(width: 3840, height: 2160, hdrType: .hdr))
        #expect(file.mediaRules[2].duration == 120)
    }

    static let mistakes: [(String, String)] = [
        ("{\"devices\": [\n  {\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\",\n   \"vidoe\": true}\n]}",
         "t.json:3:4: unknown key \"vidoe\" in devices[0]"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"0011\"}]}",
         "t.json:1:37: devices[0].uuid: must be 32 hex digits"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"address\": \"10.0.0.5\"}]}",
         "devices[0].address: must be a loopback IPv4 address"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"castPort\": 70000}]}",
         "devices[0].castPort: expected an integer in 1…65535, found 70000"),
        ("{\"apps\": [{\"appId\": \"A\", \"customNamespaces\": [{\"namespace\": \"urn:x-cast:a\", \"mode\": \"loud\"}]}]}",
         "apps[0].customNamespaces[0].mode: unknown mode \"loud\""),
        ("{\"apps\": [{\"appId\": \"A\", \"customNamespaces\": [{\"namespace\": \"urn:x-cast:a\", \"mode\": \"scripted\"}]}]}",
         "apps[0].customNamespaces[0]: mode \"scripted\" needs \"replies\""),
        ("{\"apps\": [{\"appId\": \"A\", \"namespaces\": [\"com.example.chat\"]}]}",
         "apps[0].namespaces[0]: namespace must start with urn:x-cast:"),
        ("{\"apps\": [{\"displayName\": \"no id\"}]}", "apps[0]: missing \"appId\""),
        ("{\"mediaRules\": [\n {\"videoInfo\": {\"width\": 3840, \"height\": 2160, \"hdrType\": \"hdr11\"}}]}",
         "t.json:2:59: mediaRules[0].videoInfo.hdrType: unknown HDR type \"hdr11\" (expected sdr, hdr, dv)"),
        ("{\"mediaRules\": [{\"contentId\": \"[abc\"}]}", "mediaRules[0].contentId: bad glob \"[abc\""),
        ("{\"mediaRules\": [{\"duration\": -3}]}", "mediaRules[0].duration: expected a number ≥ 0"),
        ("{\"mediaRules\": [{\"loadError\": 42}]}", "mediaRules[0].loadError: expected an integer in 100…999"),
        ("{\"mediaRules\": {}}", "mediaRules: expected an array, found an object"),
        ("{\"devices\": [{\"name\": \"A\", \"uuid\": \"00112233445566778899aabbccddeeff\"},\n"
            + " {\"name\": \"B\", \"uuid\": \"00112233445566778899aabbccddeeff\"}]}", "devices: "),
        ("{\"devices\": [\n  {\"name\": \"TV\",", "t.json:2:17: invalid JSON: unexpected end of input"),
        ("[1, 2]", "t.json:1:1: expected an object, found an array"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"tls\": \"tls13\"}]}",
         "t.json:1:80: devices[0].tls: unknown TLS profile \"tls13\" (expected chromecast-legacy, modern)"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"profile\": \"nest-hub-3\"}]}", "devices[0].profile: unknown profile \"nest-hub-3\""),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"field\": {\"idleResetBy\": \"always\"}}]}", "devices[0].field.idleResetBy: expected media or any-message"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"field\": {\"launch\": {\"hangProbability\": 1.5}}}]}", "devices[0].field.launch.hangProbability: expected a probability"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"field\": {\"launch\": {\"hangProbability\": 0.6, \"cancelledProbability\": 0.6}}}]}",
         "devices[0].field.launch: cancelledProbability + hangProbability must be at most 1"),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"field\": {\"dailyReboot\": {\"windowStart\": \"25:00\"}}}]}", "devices[0].field.dailyReboot.windowStart: expected \"HH:MM\""),
        ("{\"devices\": [{\"name\": \"TV\", \"uuid\": \"00112233445566778899aabbccddeeff\", \"field\": {\"ambiant\": null}}]}", "unknown key \"ambiant\" in devices[0].field"),
    ]

    @Test("a device's field profile: a name, the model's, overrides on top, null turns a timer off")
    func fieldProfiles() throws {
        let text = """
            {"devices": [
              {"name": "A", "uuid": "00112233445566778899aabbccddee01", "model": "Google Nest Hub", "profile": "nest-hub-fuchsia"},
              {"name": "B", "uuid": "00112233445566778899aabbccddee02", "model": "Google Nest Hub", "address": "127.0.0.2",
               "field": {"appIdleTimeout": null, "idleResetBy": "any-message", "ambient": {"after": 5},
                         "launch": {"cancelledProbability": 0.25}, "dailyReboot": {"windowStart": "03:30", "downFor": 5}}},
              {"name": "C", "uuid": "00112233445566778899aabbccddee03", "model": "Chromecast", "address": "127.0.0.3"}
            ]}
            """
        let devices = try SimulatorConfigFile.parse(text: text, file: "t.json").devices
        #expect(devices[0].field == FieldProfile.nestHubFuchsia)
        let b = try #require(devices[1].field)
        #expect(b.name == "nest-hub", "field without profile: the model's profile is the base")
        #expect(b.appIdleTimeout == nil && b.idleResetBy == .anyMessage && b.launch.cancelledProbability == 0.25)
        #expect(b.launch.readyAfter == FieldProfile.nestHub.launch.readyAfter, "what is not overridden stays")
        #expect(b.ambient == FieldProfile.Ambient(after: 5, coversApp: true))
        #expect(b.dailyReboot?.windowStart == 3.5 * 3600 && b.dailyReboot?.windowLength == 3600 && b.dailyReboot?.downFor == 5)
        #expect(devices[2].field == nil, "neither key: the simulator's --profile decides")
        var settings = SimulatorSettings()
        #expect(settings.fieldProfile(for: devices[2]) == .ideal)
        settings.fieldProfile = .model
        settings.fieldTimeScale = 10
        #expect(settings.fieldProfile(for: devices[2]) == FieldProfile.chromecast.scaled(by: 10))
        #expect(settings.fieldProfile(for: devices[0]).appIdleTimeout == 3, "a device's own profile is scaled too")
    }

    @Test("each mistake is reported at its file:line:column", arguments: 0..<mistakes.count)
    func mistake(index: Int) {
        let (text, expected) = Self.mistakes[index]
        do {
            let file = try SimulatorConfigFile.parse(text: text, file: "t.json")
            Issue.record("accepted: \(text) → \(file.devices.count) devices")
        } catch {
            let message = "\(error)"
            #expect(message.contains(expected), "\(message)")
            #expect(message.hasPrefix("t.json:"), "\(message)")
        }
    }

    @Test("a missing or non-UTF-8 file is a clear error")
    func unreadable() throws {
        #expect(throws: SimulatorError.self) { try SimulatorConfigFile.load(path: "/nonexistent/sim.json") }
        let path = NSTemporaryDirectory() + "castline-sim-\(UInt32.random(in: 0...UInt32.max)).json"
        try Data([0x7B, 0xFF, 0xFE, 0x7D]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do { _ = try SimulatorConfigFile.load(path: path); Issue.record("accepted non-UTF-8") } catch {
            #expect("\(error)".contains("not UTF-8"))
        }
    }
}

/// The example config's apps and media rules on a running simulator, over TLS.
@Suite("Simulator config file over loopback TLS")
struct SimulatorConfigFileServingTests {
    @Test("configs/sim.json: a scripted namespace answers; a 2160p URL plays with 3840×2160 HDR videoInfo; *broken* fails")
    func exampleServes() async throws {
        let file = try SimulatorConfigFile.load(path: SimulatorConfigFileTests.examplepath)
        try await withSimulatorRig(settings: { settings in
            settings.apps = file.apps
            settings.mediaRules = file.mediaRules
        }) { rig in
            let client = try await rig.connect()
            try await client.send(namespace: .connection, ["type": "CONNECT"])
            try await client.send(namespace: .receiver, ["type": "LAUNCH", "appId": "C0FFEE00", "requestId": 1])
            let status = await client.next(type: "RECEIVER_STATUS", namespace: .receiver)
            let app = status?["status"]?["applications"]?[0]
            let namespaces = app?["namespaces"]?.array?.compactMap { $0["name"]?.string } ?? []
            #expect(namespaces.contains("urn:x-cast:com.example.signage"))
            let transport = try #require(app?["transportId"]?.string)
            try await client.send(namespace: .connection, destination: transport, ["type": "CONNECT"])

            try await client.send(namespace: "urn:x-cast:com.example.signage", destination: transport, ["type": "SHOW", "slide": 3])
            #expect(await client.next(type: "SHOWING", namespace: "urn:x-cast:com.example.signage") != nil)

            try await client.send(namespace: .media, destination: transport, [
                "type": "LOAD", "requestId": 2, "autoplay": true,
                "media": ["contentId": "http://media.local/film-2160p.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"],
            ])
            // The reply to LOAD (after the unsolicited LOADING status real devices send first).
            let reply = await client.next { message in
                message.namespace == .media && message.payload.text.flatMap { try? JSONValue.parse($0) }?["requestId"]?.int == 2
            }
            let media = reply?.payload.text.flatMap { try? JSONValue.parse($0) }
            let entry = media?["status"]?[0]
            #expect(entry?["videoInfo"]?["width"]?.int == 3840, "\(media?.serialized() ?? "no MEDIA_STATUS")")
            #expect(entry?["videoInfo"]?["height"]?.int == 2160)
            #expect(entry?["videoInfo"]?["hdrType"]?.string == "hdr")
            #expect(entry?["media"]?["duration"]?.double == 120)

            try await client.send(namespace: .media, destination: transport, [
                "type": "LOAD", "requestId": 3,
                "media": ["contentId": "http://media.local/broken.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"],
            ])
            let failed = await client.next(type: "LOAD_FAILED", namespace: .media)
            #expect(failed?["requestId"]?.int == 3)
            #expect(failed?["detailedErrorCode"]?.int == 104)
            await client.close()
        }
    }
}
