import CastCore
import CastLogging
import CastProtocol

/// The multizone namespace on `receiver-0`, group membership and group playback.
///
/// A group endpoint (``group`` set) answers GET_STATUS with its members; every device answers
/// GET_CASTING_GROUPS with the groups whose media it plays now. Changes go to every sender
/// connected to `receiver-0`, unsolicited (`requestId` 0).
extension ReceiverDevice {
    /// Answers one multizone request; unknown types are ignored as real devices do.
    mutating func handleMultizone(_ payload: CastMessage.Payload) -> [EndpointReply] {
        let json: JSONValue
        let requestID: RequestID
        switch RequestEnvelope(payload) {
        case .invalid(let id, let why):
            log.warning("multizone request rejected: \(why)", ["requestId": .int(id.rawValue)])
            return [EndpointReply(.multizone, ReceiverMessage.invalidRequest(requestID: id, reason: .invalidCommand).json,
                                  to: .requester)]
        case .valid(let value, let id):
            json = value
            requestID = id
        }
        let type = json["type"]?.string ?? ""
        log.debug("multizone request \(type)", ["type": .string(type), "requestId": .int(requestID.rawValue)])
        switch type {
        case Multizone.getStatus:
            return [EndpointReply(.multizone, multizoneStatus(requestID: requestID), to: .requester)]
        case Multizone.getCastingGroups:
            let groups = memberships.castingGroups.map(\.json)
            return [EndpointReply(.multizone, Multizone.message(Multizone.castingGroups, requestID: requestID,
                                                                ["status": ["groups": .array(groups)]]), to: .requester)]
        default:
            ignoredMessages += 1
            log.warning("ignored multizone message \(type)", ["type": .string(type)])
            return []
        }
    }

    /// MULTIZONE_STATUS: a group's members; a device alone lists no devices.
    func multizoneStatus(requestID: RequestID) -> JSONValue {
        let status = group?.statusJSON ?? ["devices": [], "isMultichannel": false]
        return Multizone.message(Multizone.status, requestID: requestID, ["status": status])
    }

    /// An unsolicited multizone message to every sender on `receiver-0`.
    mutating func multizoneBroadcast(_ type: String, _ fields: JSONObject) -> [DeviceOutput] {
        deliver([EndpointReply(.multizone, Multizone.message(type, requestID: .unsolicited, fields), to: .everyone)],
                from: Self.platformEndpoint, requester: nil)
    }

    // MARK: Group endpoint

    /// The members when this device is a group endpoint.
    public var groupState: MultizoneGroupState? { group }

    /// The groups this device belongs to and plays for.
    public var groupMemberships: MultizoneMemberships { memberships }

    /// Makes this device a group endpoint with `state` (before any sender connects, or after a
    /// leader move).
    public mutating func becomeGroup(_ state: MultizoneGroupState) {
        group = state
    }

    /// A member joins the group: DEVICE_ADDED. Nothing when it is already a member.
    public mutating func addGroupMember(_ member: MultizoneMember, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard var state = group, !state.members.contains(where: { $0.uuid == member.uuid }) else { return out }
        state.members.append(member)
        group = state
        log.info("group member \(member.name) added", ["member": .string(member.uuid)])
        out += multizoneBroadcast(Multizone.deviceAdded, ["device": member.json])
        return out
    }

    /// A member leaves the group: DEVICE_REMOVED. Nothing when it is no member.
    public mutating func removeGroupMember(uuid: String, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard var state = group, let index = state.members.firstIndex(where: { $0.uuid == uuid }) else { return out }
        let member = state.members.remove(at: index)
        group = state
        log.info("group member \(member.name) removed", ["member": .string(uuid)])
        out += multizoneBroadcast(Multizone.deviceRemoved, ["deviceId": .string(Multizone.dashed(uuid))])
        return out
    }

    /// A member's playback changed (the group started or stopped, the member left): DEVICE_UPDATED.
    public mutating func setMemberPlayback(uuid: String, _ playback: MultizonePlayback, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard var state = group, let index = state.members.firstIndex(where: { $0.uuid == uuid }),
              state.members[index].playback != playback else { return out }
        state.members[index].playback = playback
        group = state
        log.info("group member \(state.members[index].name): \(playback.rawValue)", [
            "member": .string(uuid), "playback": .string(playback.rawValue),
        ])
        out += multizoneBroadcast(Multizone.deviceUpdated, ["device": state.members[index].json])
        return out
    }

    /// What the group plays, for its members: the media's player state while an app with media
    /// runs (BUFFERING, PLAYING, PAUSED), nil when it plays nothing (also IDLE).
    public func groupPlayerState(now: Double) -> PlayerState? {
        var copy = self
        _ = copy.advance(to: now)
        guard copy.running != nil, let session = copy.player.session, session.playerState != .idle else { return nil }
        return session.playerState
    }

    // MARK: Member

    /// The groups this device belongs to (eureka_info, CASTING_GROUPS).
    public mutating func setGroupMemberships(_ groups: [MultizoneGroupReference]) {
        memberships.groups = groups
        memberships.casting.removeAll { uuid in !groups.contains { $0.uuid == uuid } }
    }

    /// This device plays (or stops playing) the media of group `uuid`: PLAYBACK_SESSION_UPDATED.
    public mutating func followGroupPlayback(_ uuid: String, playing: Bool, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard let reference = memberships.groups.first(where: { $0.uuid == uuid }),
              memberships.casting.contains(uuid) != playing else { return out }
        if playing { memberships.casting.append(uuid) } else { memberships.casting.removeAll { $0 == uuid } }
        log.info("\(playing ? "plays" : "stopped playing") the media of group \(reference.name)", [
            "group": .string(uuid), "playing": .bool(playing),
        ])
        out += sessionUpdated(reference, playing: playing)
        return out
    }

    func sessionUpdated(_ reference: MultizoneGroupReference, playing: Bool) -> [DeviceOutput] {
        var copy = self
        return copy.multizoneBroadcast(Multizone.sessionUpdated, [
            "playbackSession": ["group": reference.json, "isPlaying": .bool(playing)],
        ])
    }

    /// An app started here by this device's own sender: the device leaves the playback of every
    /// group it followed (``DeviceOutput/leftGroupPlayback(groupUUIDs:)``).
    mutating func leaveGroupPlaybackForOwnCast() -> [DeviceOutput] {
        let left = memberships.castingGroups
        guard !left.isEmpty else { return [] }
        memberships.casting.removeAll()
        var out: [DeviceOutput] = []
        for reference in left {
            log.info("left the playback of group \(reference.name): casting on its own", ["group": .string(reference.uuid)])
            out += sessionUpdated(reference, playing: false)
        }
        out.append(.leftGroupPlayback(groupUUIDs: left.map(\.uuid)))
        return out
    }

    /// A sender of this device casts on it: the Default Media Receiver starts as if another
    /// sender launched it (control `member-cast`). RECEIVER_STATUS (requestId 0) to `receiver-0`.
    public mutating func startOwnCast(appID: String, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard let definition = catalogue.first(where: { $0.appID == appID }) else { return out }
        out += terminateApp(reason: "replaced by \(appID) (own cast)")
        out += start(definition, now: now)
        out += deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
        out += announceIfChanged()
        return out
    }
}
