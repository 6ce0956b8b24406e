import CastCore
import CastProtocol
import CastReceiverSim
import CastReceiverSimServer
import CastSender
import CastTestSupport
import Synchronization
import Testing

/// A session on a simulated speaker group of three devices: members from the multizone namespace,
/// a leader move followed without ending the session, a removed member, a member that leaves.
/// Discovery is the simulator's own view of where the group's endpoint is (what mDNS would say;
/// the avahi path is in Tests/Conformance/test_multizone.py).
@Suite(.serialized) struct GroupSessionTests {
    static let groupUUID = "6d2e7f80a1b2c3d4e5f60718293a4b5c"
    static let group = SimulatedGroupConfiguration(name: "Downstairs", uuid: groupUUID, members: [0, 1, 2], leader: 0,
                                                   castPort: 0)

    /// The group as discovery would report it now.
    static func groupDevice(_ rig: SenderRig) -> CastDevice {
        let endpoint = rig.simulator.groups.groups[0].endpoint.configuration
        return CastDevice(id: endpoint.uuid, friendlyName: endpoint.name, host: endpoint.address, port: endpoint.castPort,
                          modelName: CastDevice.groupModelName)
    }

    static func withGroupSession(_ body: (SenderRig, CastSession, EventRecorder) async throws -> Void) async throws {
        try await withTeardown(try await SenderRig.start(count: 3, groups: [group]), { await $0.stop() }) { rig in
            let manager = rig.manager { $0.reconnectPolicy = ReconnectPolicy(initialDelay: 0.05, maxDelay: 0.2) }
            await manager.setTransferCandidates { [rig] in [Self.groupDevice(rig)] }
            let recorder = EventRecorder()
            manager.addListener(recorder)
            let session = try await manager.startSession(on: Self.groupDevice(rig))
            try await body(rig, session, recorder)
        }
    }

    static func members(_ session: CastSession) async -> [MultizoneView.Member] { await session.multizone.members }

    /// A group given by address whose eureka_info did not answer: no model, a port other than
    /// 8009. pychromecast takes it for a group; the session asks it, and its answer settles it.
    @Test("an endpoint with no model on another port is asked for members: a group lists them, a device none")
    func anEndpointWithoutAModelIsAskedForMembers() async throws {
        try await withTeardown(try await SenderRig.start(count: 3, groups: [Self.group]), { await $0.stop() }) { rig in
            var bare = Self.groupDevice(rig)
            bare.modelName = ""
            #expect(bare.mayBeGroup && !bare.isGroup)
            let session = try await rig.manager().startSession(on: bare)
            #expect(await pollUntil(timeout: 5) { await Self.members(session).count == 3 })
            let member = rig.simulator.devices[1].configuration
            let alone = CastDevice(id: member.uuid, friendlyName: member.name, host: member.address, port: member.castPort)
            #expect(alone.mayBeGroup)
            let device = try await rig.manager().startSession(on: alone)
            #expect(await pollUntil(timeout: 5) { await device.multizone.hasStatus })
            #expect(await Self.members(device).isEmpty)
        }
    }

    @Test func groupCastPlaysOnEveryMemberAndTheSessionKnowsTheMembers() async throws {
        try await Self.withGroupSession { rig, session, _ in
            #expect(await pollUntil(timeout: 5) { await Self.members(session).map(\.name) == ["castline sim 1", "castline sim 2", "castline sim 3"] })
            let loaded = await session.remoteMediaClient.loadAndWait(
                MediaInformation(contentID: "http://media.invalid/song.mp3", contentType: "audio/mpeg"), timeout: 10)
            guard case .success = loaded else { Issue.record("load: \(loaded)"); return }
            #expect(await pollUntil(timeout: 5) { await Self.members(session).allSatisfy { $0.playbackState == "PLAYING" } })
            for index in 0..<3 {
                let groups = try await rig.state(index)["multizone"]?["castingGroups"]?.array ?? []
                #expect(groups.count == 1, "member \(index) plays for the group")
            }
        }
    }

    @Test func leaderMoveSuspendsAndResumesOnTheNewEndpointWithTheSameMedia() async throws {
        try await Self.withGroupSession { rig, session, recorder in
            let loaded = await session.remoteMediaClient.loadAndWait(
                MediaInformation(contentID: "http://media.invalid/song.mp3", contentType: "audio/mpeg"), timeout: 10)
            guard case .success = loaded else { Issue.record("load: \(loaded)"); return }
            let before = try #require(session.remoteMediaClient.mediaStatus)
            let sessionID = await session.application?.sessionID
            let moved = MonotonicClock.seconds()
            try await rig.control(["command": "group-leader", "group": 0, "leader": 1])
            let resumed = await recorder.wait(timeout: 5) { events in events.contains(.didResume(transferred: false)) }
            let took = MonotonicClock.seconds() - moved
            #expect(resumed && took < 2, "resumed after \(took) s")
            let suspend = recorder.events.first { if case .didSuspend = $0 { return true } else { return false } }
            guard case .didSuspend(.leaderMoved(_, let to))? = suspend else {
                Issue.record("expected didSuspend(leader moved), got \(recorder.names)")
                return
            }
            let endpoint = rig.simulator.groups.groups[0].endpoint.configuration
            #expect(to == "\(endpoint.address):\(endpoint.castPort)")
            #expect(await session.device.port == endpoint.castPort)
            #expect(!recorder.names.contains("didEnd"))
            #expect(await session.application?.sessionID == sessionID)
            let after = await waitForMediaStatus(session.remoteMediaClient, timeout: 3) { $0.playerState == .playing }
            #expect(after?.media?.contentID == before.media?.contentID)
            #expect((after?.currentTime ?? 0) >= before.currentTime)
        }
    }

    @Test func removedMemberAndMemberThatLeftShowInTheGroupStatus() async throws {
        try await Self.withGroupSession { rig, session, _ in
            #expect(await pollUntil(timeout: 5) { await Self.members(session).count == 3 })
            let removedAt = MonotonicClock.seconds()
            try await rig.control(["command": "group-remove", "group": 0, "device": 2])
            #expect(await pollUntil(timeout: 1) { await Self.members(session).count == 2 })
            #expect(MonotonicClock.seconds() - removedAt < 1)
            let loaded = await session.remoteMediaClient.loadAndWait(
                MediaInformation(contentID: "http://media.invalid/song.mp3", contentType: "audio/mpeg"), timeout: 10)
            guard case .success = loaded else { Issue.record("load: \(loaded)"); return }
            try await rig.control(["command": "member-cast", "device": 1])
            #expect(await pollUntil(timeout: 2) { await Self.members(session).first { $0.name == "castline sim 2" }?.hasLeft == true })
            #expect(rig.logRecords.contains { $0.message.contains("left the group's playback") })
        }
    }
}
