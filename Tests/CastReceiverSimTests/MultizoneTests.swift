import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim

/// The multizone namespace on `receiver-0` of a group endpoint and of a member, on the pure
/// state machine with a hand-moved clock.
@Suite struct MultizoneTests {
    static let memberA = MultizoneMember(uuid: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", name: "Kitchen", capabilities: 198_660)
    static let memberB = MultizoneMember(uuid: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2", name: "Den", capabilities: 198_660,
                                         channel: "LEFT")
    static let groupUUID = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    static let reference = MultizoneGroupReference(uuid: groupUUID, name: "Downstairs", leaderAddress: "127.0.0.1",
                                                   leaderPort: 32219, isLeader: false)

    func multizone(_ outputs: [DeviceOutput]) -> [JSONValue] {
        SimHarness.sent(outputs, on: .multizone).map(\.json)
    }

    @Test func groupStatusListsMembersWithDashedIDs() throws {
        var sim = SimHarness(isVideoDevice: false)
        sim.device.becomeGroup(MultizoneGroupState(members: [Self.memberA, Self.memberB], isMultichannel: true))
        sim.connect()
        let replies = multizone(sim.send(sim.request("GET_STATUS", [:]), on: .multizone))
        let reply = try #require(replies.first)
        #expect(reply["type"]?.string == "MULTIZONE_STATUS")
        #expect(reply["requestId"]?.int == 1)
        let devices = reply["status"]?["devices"]?.array ?? []
        #expect(devices.map { $0["deviceId"]?.string } == ["aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1", "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa2"])
        #expect(devices.map { $0["name"]?.string } == ["Kitchen", "Den"])
        #expect(devices[1]["channelSelection"]?.string == "LEFT")
        #expect(reply["status"]?["isMultichannel"]?.bool == true)
    }

    @Test func addRemoveAndUpdateGoToEverySenderOnReceiver0() {
        var sim = SimHarness(isVideoDevice: false)
        sim.device.becomeGroup(MultizoneGroupState(members: [Self.memberA]))
        sim.connect(1, sender: "s1")
        sim.connect(2, sender: "s2")
        let added = multizone(sim.device.addGroupMember(Self.memberB, now: sim.now))
        #expect(added.count == 2)
        #expect(added.allSatisfy { $0["type"]?.string == "DEVICE_ADDED" && $0["device"]?["name"]?.string == "Den" })
        #expect(multizone(sim.device.addGroupMember(Self.memberB, now: sim.now)).isEmpty, "already a member: nothing")
        let updated = multizone(sim.device.setMemberPlayback(uuid: Self.memberB.uuid, .left, now: sim.now))
        #expect(updated.first?["type"]?.string == "DEVICE_UPDATED")
        #expect(updated.first?["device"]?["playbackState"]?.string == "LEFT")
        let removed = multizone(sim.device.removeGroupMember(uuid: Self.memberA.uuid, now: sim.now))
        #expect(removed.first?["type"]?.string == "DEVICE_REMOVED")
        #expect(removed.first?["deviceId"]?.string == "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1")
        #expect(sim.device.groupState?.members.map(\.name) == ["Den"])
    }

    @Test func groupPlayerStateFollowsItsMedia() {
        var sim = SimHarness(isVideoDevice: false)
        sim.device.becomeGroup(MultizoneGroupState(members: [Self.memberA]))
        #expect(sim.device.groupPlayerState(now: sim.now) == nil)
        sim.launchDMR()
        sim.load()
        sim.advance(by: 0.5)
        #expect(sim.device.groupPlayerState(now: sim.now) == .playing)
        sim.media("STOP", ["mediaSessionId": 1])
        #expect(sim.device.groupPlayerState(now: sim.now) == nil)
    }

    @Test func memberReportsCastingGroupsAndLeavesOnItsOwnCast() throws {
        var sim = SimHarness(isVideoDevice: false)
        sim.device.setGroupMemberships([Self.reference])
        sim.connect()
        let following = multizone(sim.device.followGroupPlayback(Self.groupUUID, playing: true, now: sim.now))
        #expect(following.first?["type"]?.string == "PLAYBACK_SESSION_UPDATED")
        #expect(following.first?["playbackSession"]?["isPlaying"]?.bool == true)
        let casting = try #require(multizone(sim.send(sim.request("GET_CASTING_GROUPS", [:]), on: .multizone)).first)
        #expect(casting["type"]?.string == "CASTING_GROUPS")
        #expect(casting["status"]?["groups"]?.array?.first?["groupId"]?.string == "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb")
        // Its own sender launches an app: it leaves, once.
        let outputs = sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        #expect(outputs.contains(.leftGroupPlayback(groupUUIDs: [Self.groupUUID])))
        #expect(sim.device.groupMemberships.casting.isEmpty)
        let again = sim.device.startOwnCast(appID: "CC1AD845", now: sim.now)
        #expect(!again.contains { if case .leftGroupPlayback = $0 { return true } else { return false } })
    }

    @Test func aDeviceAloneAnswersAnEmptyStatusAndIgnoresUnknownTypes() throws {
        var sim = SimHarness()
        sim.connect()
        let reply = try #require(multizone(sim.send(sim.request("GET_STATUS", [:]), on: .multizone)).first)
        #expect(reply["status"]?["devices"]?.array?.isEmpty == true)
        #expect(multizone(sim.send(sim.request("SURPRISE", [:]), on: .multizone)).isEmpty)
        #expect(sim.snapshot.ignoredMessages == 1)
    }
}

/// ``GroupPlayback``: which members play a group's media.
@Suite struct GroupPlaybackTests {
    @Test func membersFollowLeaveAndComeBackWithTheNextCast() {
        var playback = GroupPlayback()
        let members = [0, 1, 2]
        var changed = playback.memberLeft(1, members: members)
        #expect(!changed, "nothing plays: nothing to leave")
        var followers = playback.playbackChanged(playing: true, members: members)
        #expect(followers == [0, 1, 2])
        followers = playback.playbackChanged(playing: true, members: members)
        #expect(followers == nil, "no change")
        changed = playback.memberLeft(1, members: members)
        #expect(changed)
        changed = playback.memberLeft(1, members: members)
        #expect(!changed, "left once")
        changed = playback.memberLeft(7, members: members)
        #expect(!changed, "no member")
        #expect(!playback.joinsPlaying(1) && playback.joinsPlaying(3))
        followers = playback.playbackChanged(playing: false, members: members)
        #expect(followers == [0, 1, 2], "every member idle again")
        #expect(playback.left.isEmpty)
        followers = playback.playbackChanged(playing: true, members: members)
        #expect(followers == [0, 1, 2], "the next cast brings it back")
        _ = playback.memberLeft(2, members: members)
        playback.removed(2)
        #expect(playback.left.isEmpty)
    }
}
