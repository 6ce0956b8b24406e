import CastCore
import CastReceiverSim
import NIOCore

/// The control commands on groups: `group-leader`, `group-add`, `group-remove`, `member-cast`,
/// and the `groups` part of `list` and of the ready line.
extension GroupCoordinator {
    /// `list` entries: uuid, name, endpoint, leader, members with their playback, endpoint state.
    func listing() -> EventLoopFuture<[JSONValue]> {
        let records = allRecords
        let futures = records.map { record in
            record.endpoint.onLoop { endpoint -> JSONValue in
                let members = endpoint.readState { s, _ in s.groupState?.members ?? [] }
                var entry = self.summary(record)
                entry.set("members", .array(members.map { member in
                    var json = member.json
                    if let index = self.devices.firstIndex(where: { $0.configuration.uuid == member.uuid }) {
                        if case .object(var object) = json {
                            object.set("index", .int(Int64(index)))
                            json = .object(object)
                        }
                    }
                    return json
                }))
                entry.set("endpoint", endpoint.listing())
                return .object(entry)
            }
        }
        return EventLoopFuture.whenAllSucceed(futures, on: loop)
    }

    /// uuid, name, address, ports, leader and member indexes of every group (the ready line).
    public func readyEntries() -> [JSONValue] {
        allRecords.map { .object(summary($0)) }
    }

    func summary(_ record: Record) -> JSONObject {
        let c = record.endpoint.configuration
        var entry: JSONObject = [
            "uuid": .string(c.uuid), "name": .string(c.name), "model": .string(c.model), "address": .string(c.address),
            "castPort": .int(Int64(c.castPort)), "httpPort": .int(Int64(c.httpPort)), "httpsPort": .int(Int64(c.httpsPort)),
            "leader": .int(Int64(record.configuration.leader)),
            "memberIndexes": .array(record.configuration.members.map { .int(Int64($0)) }),
            "playing": .bool(record.playing), "left": .array(record.left.sorted().map { .int(Int64($0)) }),
        ]
        if let pair = record.configuration.stereoPair { entry.set("stereoPair", .array(pair.map { .int(Int64($0)) })) }
        return entry
    }

    // MARK: Leader

    /// Moves the group's endpoint to member `leader`: the old endpoint withdraws its mDNS record
    /// and closes, a new one (same uuid, the new leader's address and port) starts with the
    /// running session at its position and advertises.
    /// `carrySession` false: the new endpoint starts without the session (the leader rebooted
    /// and took the group's playback with it).
    func moveLeader(group selector: JSONValue?, to leaderSelector: JSONValue?, carrySession: Bool = true) async throws -> JSONValue {
        let record = try record(selector)
        let leader: Int
        if let leaderSelector, !leaderSelector.isNull {
            leader = try deviceIndex(leaderSelector)
        } else {
            // The next member after the current leader.
            let members = record.configuration.members
            let position = members.firstIndex(of: record.configuration.leader) ?? 0
            leader = members[(position + 1) % members.count]
        }
        guard record.configuration.members.contains(leader) else {
            throw SimulatorError.control("device \(leader) is not a member of \(record.configuration.name)")
        }
        guard leader != record.configuration.leader else {
            throw SimulatorError.control("device \(leader) already leads \(record.configuration.name)")
        }
        let old = record.endpoint
        let exported = try await old.onLoop { device in
            (device.readState { s, now in s.exportSession(now: now) }, device.readState { s, _ in s.groupState })
        }.get()
        var moved = record.configuration
        moved.leader = leader
        let endpoint = try makeEndpoint(moved, generation: record.moves + 1)
        let state = exported.1 ?? groupState(moved)
        try await endpoint.onLoop { device in device.mutateState { s, _ in s.becomeGroup(state); return [] } }.get()
        try? await old.stop().get()
        try await endpoint.start().get()
        if carrySession, let session = exported.0 {
            try await endpoint.onLoop { device in device.mutateState { s, now in s.importSession(session, keepSessionID: true, now: now) } }.get()
        }
        _ = update(record.configuration.uuid) { entry in
            entry.configuration = moved
            entry.endpoint = endpoint
            entry.moves += 1
        }
        try await updateMemberships().get()
        let c = endpoint.configuration
        log.warning("group \(moved.name): leader moved to \(devices[leader].configuration.name), endpoint \(c.address):\(c.castPort)", [
            "group": .string(moved.uuid), "leader": .int(leader), "address": .string(c.address), "castPort": .int(c.castPort),
        ])
        endpoint.frameLogEvent("groupLeaderMoved", connection: nil, peer: nil, fields: [
            "leader": .int(Int64(leader)), "address": .string(c.address), "castPort": .int(Int64(c.castPort)),
        ])
        return ["ok": true, "group": .object(summary(try self.record(.string(moved.uuid))))]
    }

    /// The leader of one or more groups went down: each of those groups elects the next member.
    /// After a reboot the group's session is gone (it ran on the leader); after an outage it
    /// carries over.
    func leaderWentDown(_ index: Int, rebooted: Bool) async {
        let led = groups.filter { $0.configuration.leader == index && $0.configuration.members.count > 1 }
        for group in led {
            do {
                _ = try await moveLeader(group: .string(group.configuration.uuid), to: nil, carrySession: !rebooted)
            } catch {
                log.error("group \(group.configuration.name): no new leader after device \(index) went down: \(error)")
            }
        }
    }

    // MARK: Members

    /// Adds device `device` to the group: DEVICE_ADDED; it plays along when the group plays.
    func addMember(group selector: JSONValue?, device deviceSelector: JSONValue?) async throws -> JSONValue {
        let record = try record(selector)
        let index = try deviceIndex(deviceSelector)
        guard !record.configuration.members.contains(index) else {
            throw SimulatorError.control("device \(index) is already a member of \(record.configuration.name)")
        }
        guard record.configuration.members.count < 10 else { throw SimulatorError.control("a group has at most 10 members") }
        guard let updated = update(record.configuration.uuid, { $0.configuration.members.append(index) }) else {
            throw SimulatorError.control("the group is gone")
        }
        let member = member(index: index, in: updated.configuration, playback: .idle)
        try await updated.endpoint.onLoop { endpoint in
            endpoint.mutateState { s, now in s.addGroupMember(member, now: now) }
        }.get()
        try await updateMemberships().get()
        if updated.playback.joinsPlaying(index) { setFollowing(updated, member: index, playing: true) }
        return ["ok": true, "group": .object(summary(updated))]
    }

    /// Removes device `device` from the group: DEVICE_REMOVED; it stops playing the group's media.
    func removeMember(group selector: JSONValue?, device deviceSelector: JSONValue?) async throws -> JSONValue {
        let record = try record(selector)
        let index = try deviceIndex(deviceSelector)
        guard record.configuration.members.contains(index) else {
            throw SimulatorError.control("device \(index) is not a member of \(record.configuration.name)")
        }
        guard index != record.configuration.leader else {
            throw SimulatorError.control("device \(index) leads \(record.configuration.name): move the leader first (group-leader)")
        }
        guard let updated = update(record.configuration.uuid, { entry in
            entry.configuration.members.removeAll { $0 == index }
            if let pair = entry.configuration.stereoPair, pair.contains(index) { entry.configuration.stereoPair = nil }
            entry.playback.removed(index)
        }) else { throw SimulatorError.control("the group is gone") }
        let uuid = devices[index].configuration.uuid
        let groupUUID = updated.configuration.uuid
        try await devices[index].onLoop { device in
            device.mutateState { s, now in s.followGroupPlayback(groupUUID, playing: false, now: now) }
        }.get()
        try await updated.endpoint.onLoop { endpoint in
            endpoint.mutateState { s, now in s.removeGroupMember(uuid: uuid, now: now) }
        }.get()
        try await updateMemberships().get()
        return ["ok": true, "group": .object(summary(updated))]
    }

    /// Member `device` casts on its own (the Default Media Receiver starts there as if its own
    /// sender launched it): it leaves the playback of every group it played for.
    func memberCast(device deviceSelector: JSONValue?, appID: String) async throws -> JSONValue {
        let index = try deviceIndex(deviceSelector)
        try await devices[index].onLoop { device in
            device.mutateState { s, now in s.startOwnCast(appID: appID, now: now) }
        }.get()
        return ["ok": true]
    }
}
