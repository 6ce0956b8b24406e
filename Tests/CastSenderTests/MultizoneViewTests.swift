import CastCore
import CastSender
import Testing

/// ``MultizoneView``: multizone messages in, member list and changes out.
@Suite struct MultizoneViewTests {
    static func device(_ id: String, _ name: String, _ state: String = "IDLE") -> JSONValue {
        ["deviceId": .string(id), "name": .string(name), "playbackState": .string(state)]
    }

    @Test func statusReplacesTheListAndReportsTheDifference() {
        var view = MultizoneView()
        let first = view.apply(["type": "MULTIZONE_STATUS", "status": ["devices": [
            Self.device("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1", "Kitchen"), Self.device("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa2", "Den"),
        ], "isMultichannel": true]])
        #expect(first.count == 2)
        #expect(view.members.map(\.id) == ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"], "dashes dropped: mDNS ids")
        #expect(view.isMultichannel && view.hasStatus)
        let second = view.apply(["type": "MULTIZONE_STATUS", "status": ["devices": [
            Self.device("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa2", "Den", "PLAYING"),
        ]]])
        #expect(second.count == 2)
        #expect(second.contains { if case .memberRemoved(let m) = $0 { return m.name == "Kitchen" } else { return false } })
        #expect(second.contains { if case .memberChanged(let m) = $0 { return m.playbackState == "PLAYING" } else { return false } })
    }

    @Test func addedUpdatedRemovedAndLeft() {
        var view = MultizoneView()
        #expect(view.apply(["type": "DEVICE_ADDED", "device": Self.device("a1", "Kitchen", "PLAYING")]).count == 1)
        #expect(view.apply(["type": "DEVICE_UPDATED", "device": Self.device("a1", "Kitchen", "PLAYING")]).isEmpty, "no change")
        let left = view.apply(["type": "DEVICE_UPDATED", "device": Self.device("a1", "Kitchen", "LEFT")])
        #expect(left == [.memberLeftPlayback(MultizoneView.Member(id: "a1", name: "Kitchen", playbackState: "LEFT"))])
        #expect(view.apply(["type": "DEVICE_REMOVED", "deviceId": "a1"]).count == 1)
        #expect(view.members.isEmpty)
        #expect(view.apply(["type": "DEVICE_REMOVED", "deviceId": "a1"]).isEmpty, "unknown member: nothing")
        #expect(view.apply(["type": "DEVICE_ADDED"]).isEmpty, "no device: ignored")
        #expect(view.apply(["type": "SOMETHING_ELSE"]).isEmpty)
    }

    @Test func castingGroupsFromTheListAndFromSessionUpdates() {
        var view = MultizoneView()
        let group: JSONValue = ["groupId": "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb", "name": "Downstairs"]
        #expect(view.apply(["type": "CASTING_GROUPS", "status": ["groups": [group]]]).count == 1)
        #expect(view.castingGroups == [MultizoneView.Group(id: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", name: "Downstairs")])
        _ = view.apply(["type": "PLAYBACK_SESSION_UPDATED", "playbackSession": ["group": group, "isPlaying": false]])
        #expect(view.castingGroups.isEmpty)
        _ = view.apply(["type": "PLAYBACK_SESSION_UPDATED", "playbackSession": ["group": group, "isPlaying": true]])
        #expect(view.castingGroups.map(\.name) == ["Downstairs"])
    }
}
