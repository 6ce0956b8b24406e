import CastCore
import CastLogging
import CastProtocol
import CastTestSupport
import Testing
@testable import CastReceiverSim

@Suite("Receiver simulator: connections and the platform receiver")
struct ReceiverPlatformTests {
    @Test func connectThenGetStatus() throws {
        var sim = SimHarness()
        sim.connect()
        let outputs = sim.receiver("GET_STATUS")
        let statuses = SimHarness.receiverStatuses(outputs)
        try #require(statuses.count == 1)
        let (sent, requestID, status) = statuses[0]
        #expect(requestID == 1)
        #expect(sent.message.sourceID == "receiver-0" && sent.message.destinationID == "sender-0" && sent.connection == 1)
        #expect(status.applications.isEmpty)
        #expect(sent.json["status"]?["applications"] == nil)
        #expect(status.volume?.controlType == .attenuation)
        #expect(abs((status.volume?.stepInterval ?? 0) - 0.05) < 1e-6)
        #expect(status.volume?.level == Double(Float(0.5)) && status.volume?.muted == false)
        #expect(status.isActiveInput == false && status.isStandBy == false)
    }

    /// With a launch delay the app loads first: no reply until the delay has passed (on the
    /// hand-moved clock), then the reply to the LAUNCH's sender, the status to the others, and
    /// the advertisement; a second LAUNCH meanwhile cancels the first (LAUNCH_ERROR CANCELLED).
    @Test func launchDelayRepliesWhenTheAppHasLoaded() throws {
        var sim = SimHarness(timing: PlaybackTiming(bufferingDelay: 0.25, launchDelay: 1.5))
        sim.connect(1, sender: "sender-a")
        sim.connect(2, sender: "sender-b")
        let first = sim.receiver("LAUNCH", ["appId": "CC1AD845"], from: "sender-a", connection: 1)
        #expect(SimHarness.receiverMessages(first).isEmpty && sim.transportID == nil, "nothing before the app has loaded")
        #expect(sim.device.nextDeadline == 1001.5)
        let second = sim.receiver("LAUNCH", ["appId": "CC1AD845"], from: "sender-b", connection: 2)
        let cancelled = SimHarness.receiverMessages(second)
        try #require(cancelled.count == 1)
        #expect(cancelled[0].sent.connection == 1)
        guard case .launchError(let id, let reason) = cancelled[0].message else { Issue.record("\(cancelled[0].message)"); return }
        #expect(id == 1 && reason == .cancelled)
        #expect(sim.advance(by: 1.0).isEmpty, "the second launch's delay starts at its own LAUNCH")
        let ready = sim.advance(by: 0.5)
        let statuses = SimHarness.receiverStatuses(ready)
        #expect(statuses.map(\.sent.connection).sorted() == [1, 2])
        #expect(statuses.first { $0.sent.connection == 2 }?.requestID == 2, "the reply goes to the LAUNCH still under way")
        #expect(statuses.first { $0.sent.connection == 1 }?.requestID == 0)
        #expect(sim.transportID != nil && SimHarness.advertisements(ready).first?.busy == true)
        #expect(sim.device.nextDeadline == nil)
    }

    @Test func audioDevicesOmitActiveInputAndStandBy() throws {
        var sim = SimHarness(isVideoDevice: false)
        sim.connect()
        let status = try #require(SimHarness.receiverStatuses(sim.receiver("GET_STATUS")).first)
        #expect(status.sent.json["status"]?["isActiveInput"] == nil && status.sent.json["status"]?["isStandBy"] == nil)
    }

    @Test func requestsWithoutVirtualConnectionAreDropped() {
        var sim = SimHarness()
        sim.open(1)
        #expect(sim.receiver("GET_STATUS").isEmpty)
        #expect(sim.snapshot.ignoredMessages == 1)
        var lenient = SimHarness(requiresVirtualConnection: false)
        lenient.open(1)
        #expect(SimHarness.receiverStatuses(lenient.receiver("GET_STATUS")).count == 1)
    }

    @Test func connectedOnlyForSendersThatSendAVersion() throws {
        var sim = SimHarness()
        sim.open(1)
        #expect(sim.send(["type": "CONNECT"], on: .connection).isEmpty)
        let answer = SimHarness.sent(sim.send(["type": "CONNECT", "protocolVersionList": [0, 1, 3, 9]], on: .connection, from: "sender-x"))
        try #require(answer.count == 1)
        #expect(answer[0].json == ["type": "CONNECTED", "protocolVersion": 3])
        #expect(answer[0].message.sourceID == "receiver-0" && answer[0].message.destinationID == "sender-x")
        let refused = SimHarness.sent(sim.send(["type": "CONNECT", "connType": 7], on: .connection, from: "sender-y"))
        #expect(refused.map(\.json) == [["type": "CLOSE"]])
        #expect(sim.snapshot.senders.map(\.senderID) == ["sender-0", "sender-x"])
    }

    @Test func connectToUnknownDestinationIsIgnored() {
        var sim = SimHarness()
        sim.open(1)
        #expect(sim.send(["type": "CONNECT"], on: .connection, to: "web-5").isEmpty)
        #expect(sim.snapshot.senders.isEmpty && sim.snapshot.ignoredMessages == 1)
    }

    @Test func closeAndConnectionLossRemoveVirtualConnections() {
        var sim = SimHarness()
        sim.connect(1, sender: "sender-a")
        sim.connect(2, sender: "sender-b")
        sim.send(["type": "CLOSE"], on: .connection, from: "sender-a", connection: 1)
        #expect(sim.snapshot.senders.map(\.senderID) == ["sender-b"])
        sim.close(2)
        #expect(sim.snapshot.senders.isEmpty && sim.snapshot.connections.isEmpty == false)
        #expect(sim.snapshot.connections == [SenderConnectionID(1)])
    }

    @Test func launchDefaultMediaReceiver() throws {
        var sim = SimHarness()
        sim.connect(1, sender: "sender-a")
        sim.connect(2, sender: "sender-b")
        let outputs = sim.receiver("LAUNCH", ["appId": "CC1AD845"], from: "sender-a", connection: 1)
        let statuses = SimHarness.receiverStatuses(outputs)
        try #require(statuses.count == 2)
        let mine = try #require(statuses.first { $0.sent.connection == 1 })
        let theirs = try #require(statuses.first { $0.sent.connection == 2 })
        #expect(mine.requestID == 1 && theirs.requestID == 0)
        #expect(mine.sent.message.destinationID == "sender-a" && theirs.sent.message.destinationID == "sender-b")
        let app = try #require(mine.status.applications.first)
        #expect(app.appID == "CC1AD845" && app.appType == "WEB" && app.displayName == "Default Media Receiver")
        #expect(app.statusText == "Default Media Receiver" && app.universalAppID == "CC1AD845")
        #expect(app.isIdleScreen == false && app.launchedFromCloud == false && app.iconURL == "")
        #expect(app.sessionID == app.transportID)
        #expect(app.namespaces.contains(.media))
        #expect(app.senderConnected == false)
        #expect(Self.isLowercaseUUID(app.transportID))
        #expect(mine.status.isActiveInput == true)
        #expect(SimHarness.advertisements(outputs) == [
            DeviceAdvertisementState(busy: true, statusText: "Default Media Receiver", runningAppID: "CC1AD845"),
        ])
        // Once connected to the app, RECEIVER_STATUS says so.
        sim.connect(1, sender: "sender-a", to: app.transportID)
        let after = try #require(SimHarness.receiverStatuses(sim.receiver("GET_STATUS", from: "sender-a")).first)
        #expect(after.status.applications.first?.senderConnected == true)
        // Launching the running app again: status to the requester only, no new session.
        let again = sim.receiver("LAUNCH", ["appId": "CC1AD845"], from: "sender-b", connection: 2)
        let againStatuses = SimHarness.receiverStatuses(again)
        #expect(againStatuses.count == 1 && againStatuses.first?.sent.connection == 2)
        #expect(againStatuses.first?.status.applications.first?.sessionID == app.sessionID)
        #expect(SimHarness.advertisements(again).isEmpty)
    }

    static func isLowercaseUUID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        return parts == [8, 4, 4, 4, 12] && text.allSatisfy { $0 == "-" || $0.isNumber || ("a"..."f").contains($0) }
    }

    @Test func sessionIdsAreDeterministicPerSeed() {
        var first = SimHarness(seed: 7)
        var second = SimHarness(seed: 7)
        var other = SimHarness(seed: 8)
        let a = first.launchDMR(), b = second.launchDMR(), c = other.launchDMR()
        #expect(a == b && a != c)
    }

    @Test func launchErrors() throws {
        var sim = SimHarness()
        sim.connect()
        let unknown = SimHarness.receiverMessages(sim.receiver("LAUNCH", ["appId": "DEADBEEF"]))
        #expect(unknown.map(\.message) == [.launchError(requestID: 1, reason: .notFound)])
        let noAppID = SimHarness.receiverMessages(sim.receiver("LAUNCH"))
        #expect(noAppID.map(\.message) == [.launchError(requestID: 2, reason: .badParameter)])
        #expect(sim.snapshot.app == nil && sim.snapshot.rejectedMessages == 2)
    }

    @Test func launchReplacesTheRunningApp() throws {
        let other = AppDefinition(appID: "ABCD1234", displayName: "Other", namespaces: ["urn:x-cast:com.example.other"])
        var sim = SimHarness(catalogue: [.defaultMediaReceiver, other])
        let first = sim.launchDMR()
        let outputs = sim.receiver("LAUNCH", ["appId": "ABCD1234"])
        let close = SimHarness.sent(outputs, on: .connection)
        #expect(close.map(\.json) == [["type": "CLOSE"]] && close.first?.message.sourceID == first)
        let status = try #require(SimHarness.receiverStatuses(outputs).first)
        #expect(status.status.applications.map(\.appID) == ["ABCD1234"])
        #expect(status.status.applications.first?.transportID != first)
        #expect(SimHarness.advertisements(outputs) == [DeviceAdvertisementState(busy: true, statusText: "Other", runningAppID: "ABCD1234")])
    }

    @Test func stopWithWrongOrMissingSession() {
        var sim = SimHarness()
        sim.connect()
        #expect(SimHarness.receiverMessages(sim.receiver("STOP")).map(\.message)
            == [.invalidRequest(requestID: 1, reason: .invalidSessionID)])
        sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        let wrong = SimHarness.receiverMessages(sim.receiver("STOP", ["sessionId": "00000000-0000-4000-8000-000000000000"]))
        #expect(wrong.map(\.message) == [.invalidRequest(requestID: 3, reason: .invalidSessionID)])
        #expect(sim.snapshot.app != nil)
    }

    @Test func stopClosesAppConnectionsAndGoesIdle() throws {
        var sim = SimHarness()
        let transport = sim.launchDMR(connection: 1, sender: "sender-a")
        sim.connect(2, sender: "sender-b")
        sim.connect(2, sender: "sender-b", to: transport)
        sim.connect(3, sender: "sender-c")
        let outputs = sim.receiver("STOP", ["sessionId": .string(transport)], from: "sender-a", connection: 1)
        let closes = SimHarness.sent(outputs, on: .connection)
        #expect(closes.map(\.json) == [["type": "CLOSE"], ["type": "CLOSE"]])
        #expect(Set(closes.map(\.connection)) == [1, 2])
        #expect(closes.allSatisfy { $0.message.sourceID == transport })
        let statuses = SimHarness.receiverStatuses(outputs)
        #expect(statuses.count == 3)
        #expect(statuses.allSatisfy { $0.status.applications.isEmpty })
        #expect(statuses.first { $0.sent.connection == 1 }?.requestID == 2)
        let others = statuses.filter { $0.sent.connection != 1 }
        #expect(others.count == 2 && others.allSatisfy { $0.requestID == 0 })
        #expect(SimHarness.advertisements(outputs) == [.idle])
        // CLOSE comes before the status, the advertisement last.
        let kinds = outputs.map { output -> String in
            switch output {
            case .send(let message, _): return message.namespace == .connection ? "close" : "status"
            case .advertisementChanged: return "advert"
            case .closeConnection: return "drop"
            case .checkMedia, .mediaNotChecked: return "media"
            case .leftGroupPlayback: return "group"
            }
        }
        #expect(kinds == ["close", "close", "status", "status", "status", "advert"])
        #expect(sim.snapshot.senders.map(\.endpoint) == ["receiver-0", "receiver-0", "receiver-0"])
    }

    @Test func setVolumeClampsAndBroadcasts() throws {
        var sim = SimHarness()
        sim.connect(1)
        sim.connect(2, sender: "sender-9")
        let loud = SimHarness.receiverStatuses(sim.receiver("SET_VOLUME", ["volume": ["level": 1.7]]))
        #expect(loud.count == 2)
        #expect(loud.allSatisfy { $0.status.volume?.level == 1.0 })
        #expect(loud.first { $0.sent.connection == 2 }?.requestID == 0)
        let quiet = SimHarness.receiverStatuses(sim.receiver("SET_VOLUME", ["volume": ["level": -0.3]]))
        #expect(quiet.first?.status.volume?.level == 0)
        let rounded = SimHarness.receiverStatuses(sim.receiver("SET_VOLUME", ["volume": ["level": 0.45]]))
        #expect(rounded.first?.status.volume?.level == 0.44999998807907104)
        let muted = SimHarness.receiverStatuses(sim.receiver("SET_VOLUME", ["volume": ["muted": true]]))
        #expect(muted.first?.status.volume?.muted == true && muted.first?.status.volume?.level == 0.44999998807907104)
        let unchanged = SimHarness.receiverStatuses(sim.receiver("SET_VOLUME", ["volume": ["muted": true]]))
        #expect(unchanged.count == 1 && unchanged.first?.sent.connection == 1)
        #expect(sim.snapshot.volume.muted == true)
    }

    @Test func appAvailability() throws {
        var sim = SimHarness()
        sim.connect()
        let outputs = sim.receiver("GET_APP_AVAILABILITY", ["appId": ["CC1AD845", "00000000"]])
        let sent = try #require(SimHarness.sent(outputs).first)
        #expect(sent.json == [
            "responseType": "GET_APP_AVAILABILITY", "requestId": 1,
            "availability": ["CC1AD845": "APP_AVAILABLE", "00000000": "APP_UNAVAILABLE"],
        ])
    }

    @Test func malformedReceiverRequests() {
        var sim = SimHarness()
        sim.connect()
        let expected: [ReceiverMessage] = [.invalidRequest(requestID: 0, reason: .invalidCommand)]
        #expect(SimHarness.receiverMessages(sim.send(["type": "GET_STATUS"], on: .receiver)).map(\.message) == expected)
        #expect(SimHarness.receiverMessages(sim.raw("{\"type\": \"GET_STATUS\", ", on: .receiver)).map(\.message) == expected)
        #expect(SimHarness.receiverMessages(sim.raw("[1,2]", on: .receiver)).map(\.message) == expected)
        let binary = CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .receiver, payload: .binary([1, 2]))
        #expect(SimHarness.receiverMessages(sim.device.receive(binary, from: SenderConnectionID(1), now: sim.now)).map(\.message) == expected)
        #expect(SimHarness.receiverMessages(sim.receiver("REBOOT_NOW")).map(\.message)
            == [.invalidRequest(requestID: 1, reason: .invalidCommand)])
        #expect(SimHarness.receiverMessages(sim.receiver("RECEIVER_STATUS")).map(\.message)
            == [.invalidRequest(requestID: 2, reason: .invalidCommand)])
        #expect(sim.snapshot.rejectedMessages == 6)
    }

    @Test func heartbeatAndDeviceAuthAreLeftToTheServer() {
        var sim = SimHarness()
        sim.connect()
        #expect(sim.send(["type": "PING"], on: .heartbeat).isEmpty)
        let auth = CastMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth, payload: .binary([0x0A, 0x00]))
        #expect(sim.device.receive(auth, from: SenderConnectionID(1), now: sim.now).isEmpty)
        #expect(sim.snapshot.ignoredMessages == 0)
    }

    @Test func unknownNamespacesAndDestinationsAreIgnoredLoggedAndCounted() throws {
        let (system, sink) = try MemoryLogSink.makeSystem("", minimum: .debug)
        defer { system.shutdown() }
        var sim = SimHarness(logSystem: system)
        let transport = sim.launchDMR()
        #expect(sim.send(["type": "HELLO"], on: "urn:x-cast:com.example.nobody", to: transport).isEmpty)
        #expect(sim.send(["type": "HELLO"], on: "urn:x-cast:com.example.nobody").isEmpty)
        #expect(sim.send(["type": "GET_STATUS", "requestId": 5], on: .receiver, to: "web-77").isEmpty)
        #expect(sim.send(["type": "GET_STATUS", "requestId": 6], on: .media, to: "receiver-0").isEmpty)
        #expect(sim.snapshot.ignoredMessages == 4)
        system.flush()
        let warnings = sink.records.filter { $0.level == .warning && $0.className == "ReceiverDevice" }
        #expect(warnings.count == 4)
        let first = try #require(warnings.first)
        #expect(first.fields["namespace"] == "urn:x-cast:com.example.nobody")
        #expect(first.fields["source"] == "sender-0" && first.fields["destination"] == .string(transport))
        #expect(first.fields["device"] == .string(SimHarness.uuid))
        #expect(warnings.last?.fields["destination"] == "receiver-0")
        let started = sink.records.first { $0.level == .info && $0.message.contains("started") }
        #expect(started?.fields["appId"] == "CC1AD845" && started?.fields["session"] == .string(transport))
    }

    @Test func mediaToAnAppWithoutTheMediaNamespaceIsIgnored() {
        let plain = AppDefinition(appID: "11112222", displayName: "Plain", namespaces: ["urn:x-cast:com.example.plain"])
        var sim = SimHarness(catalogue: [plain])
        sim.connect()
        sim.receiver("LAUNCH", ["appId": "11112222"])
        let transport = sim.transportID!
        sim.connect(to: transport)
        #expect(sim.media("GET_STATUS").isEmpty)
        #expect(sim.snapshot.ignoredMessages == 1)
        #expect(sim.device.nextDeadline == nil)
    }
}

@Suite("Receiver simulator: limits")
struct ReceiverLimitTests {
    @Test func virtualConnectionsPerConnectionAreCapped() {
        var sim = SimHarness()
        sim.open(1)
        for index in 0..<ReceiverDevice.maxVirtualConnectionsPerConnection {
            #expect(sim.send(["type": "CONNECT"], on: .connection, from: "sender-\(index)").isEmpty)
        }
        let refused = SimHarness.sent(sim.send(["type": "CONNECT"], on: .connection, from: "sender-extra"))
        #expect(refused.map(\.json) == [["type": "CLOSE"]])
        // Repeating a known CONNECT is still fine, and other connections are not affected.
        #expect(sim.send(["type": "CONNECT"], on: .connection, from: "sender-0").isEmpty)
        sim.connect(2, sender: "sender-extra")
        #expect(sim.snapshot.senders.count == ReceiverDevice.maxVirtualConnectionsPerConnection + 1)
    }

    @Test func tinyAndHugeDurationsCountAsUnknown() {
        var sim = SimHarness(timing: PlaybackTiming(bufferingDelay: 0))
        sim.launchDMR()
        sim.media("QUEUE_LOAD", ["items": [
            ["media": ["contentId": "a", "contentType": "audio/mpeg", "duration": 1e-300]],
        ], "repeatMode": "REPEAT_SINGLE"])
        #expect(sim.device.nextDeadline == nil)
        sim.load(duration: 1e300)
        #expect(sim.device.nextDeadline == nil)
        sim.load(duration: 2)
        #expect(sim.device.nextDeadline == sim.now + 2)
    }
}
