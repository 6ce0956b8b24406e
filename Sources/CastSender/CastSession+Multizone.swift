import CastCore
import CastLogging
import CastProtocol
import CastTransport

/// Speaker groups: the multizone namespace on `receiver-0` (a group's members, the groups a
/// device plays for) and following a group whose leader moved.
extension CastSession {
    /// How long a group session that lost its connection looks for the group's new endpoint in
    /// discovery before it suspends as an ordinary lost connection.
    static let groupMoveWait = 1.5

    /// The requestId of the multizone questions: outside the connection's request numbering, so
    /// their answers are not matched as replies but read like every later multizone message.
    static let multizoneRequestID: Int64 = 2_000_000_001

    /// Asks for the multizone state after connecting: a group's members, a device's casting
    /// groups. Not a tracked request (a device that does not answer is no failure to report);
    /// the answer, and every later change, arrives through ``handleMultizone(_:)``.
    /// An endpoint that may be a group without saying so (``CastDevice/mayBeGroup``) is asked
    /// both: its MULTIZONE_STATUS lists members when it is one.
    func subscribeToMultizone() async {
        let types = device.isGroup ? ["GET_STATUS"] : device.mayBeGroup ? ["GET_STATUS", "GET_CASTING_GROUPS"] : ["GET_CASTING_GROUPS"]
        for type in types {
            let question: JSONValue = ["type": .string(type), "requestId": .int(Self.multizoneRequestID)]
            do {
                try await send(namespace: .multizone, destination: .receiver0, payload: .string(question.serialized()))
            } catch {
                log.debug("multizone \(type) not sent: \(error)", stateFields())
            }
        }
    }

    /// One multizone message from `receiver-0`: the view changes, each change is logged, and
    /// ``CastSessionUpdate/multizone(_:)`` goes out.
    func handleMultizone(_ message: CastMessage) {
        guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text) else {
            log.debug("multizone message that is not JSON ignored", stateFields())
            return
        }
        let changes = multizone.apply(json)
        guard !changes.isEmpty else { return }
        for change in changes {
            switch change {
            case .memberAdded(let member):
                log.info("group member \(member.name) added", stateFields(["member": .string(member.id)]))
            case .memberRemoved(let member):
                log.info("group member \(member.name) removed", stateFields(["member": .string(member.id)]))
            case .memberChanged(let member):
                log.debug("group member \(member.name): \(member.playbackState ?? "?")", stateFields(["member": .string(member.id)]))
            case .memberLeftPlayback(let member):
                log.warning("group member \(member.name) left the group's playback (another sender casts on it)",
                            stateFields(["member": .string(member.id), "event": "memberLeftPlayback"]))
            case .castingGroupsChanged(let groups):
                log.info("plays for group(s): [\(groups.map(\.name).joined(separator: ", "))]",
                         stateFields(["groups": .string(groups.map(\.id).joined(separator: ","))]))
            }
        }
        var known = device
        known.groupMembers = multizone.members
        if known != device { device = known }
        fanout.emit(.multizone(multizone))
    }

    /// For a group whose connection ended: whether discovery shows its endpoint at another
    /// `host:port` within ``groupMoveWait`` (the leader moved). The session's device then points
    /// there, so the reconnect goes to the new leader.
    func groupEndpointMoved() async -> SuspendReason? {
        guard device.isGroup, let candidates = transferCandidates else { return nil }
        let deadline = MonotonicClock.seconds() + Self.groupMoveWait
        while MonotonicClock.seconds() < deadline, !Task.isCancelled {
            let id = device.id
            if let fresh = await currentGroupEndpoint(candidates: candidates, id: id), fresh.endpoint != device.endpoint {
                let from = device.endpoint
                moveToEndpoint(of: fresh)
                return .leaderMoved(from: from, to: device.endpoint)
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The group's endpoint as its members' eureka_info tells it (the member that says it leads
    /// the group, and the group's cast port there): known before mDNS has caught up with a move.
    func leaderFromMembers(_ known: [CastDevice]) async -> CastDevice? {
        let hosts = multizone.members.compactMap { member in known.first { $0.id == member.id }?.host }
        guard !hosts.isEmpty else { return nil }
        let groupID = device.id
        let loop = self.loop
        let found = await withTaskGroup(of: (host: String, port: Int)?.self) { tasks -> (host: String, port: Int)? in
            for host in hosts {
                tasks.addTask { await EurekaInfoClient.groupLeader(groupID: groupID, host: host, timeout: 0.5, group: loop) }
            }
            for await answer in tasks { if let answer { tasks.cancelAll(); return answer } }
            return nil
        }
        guard let found else { return nil }
        var leader = device
        leader.host = found.host
        leader.port = found.port
        leader.addresses = []
        return leader
    }

    /// Before a reconnect attempt: a group follows its endpoint to where discovery shows it now.
    func refreshGroupEndpoint() async {
        guard device.isGroup, let candidates = transferCandidates else { return }
        guard let fresh = await currentGroupEndpoint(candidates: candidates, id: device.id), fresh.endpoint != device.endpoint else {
            return
        }
        moveToEndpoint(of: fresh)
    }

    /// Where the group is led from now: what its members say (fresh at once after a move),
    /// else what discovery shows (mDNS follows a second or two later).
    func currentGroupEndpoint(candidates: @Sendable () async -> [CastDevice], id: String) async -> CastDevice? {
        let known = await candidates()
        if let leader = await leaderFromMembers(known) { return leader }
        return known.first { $0.id == id }
    }

    private func moveToEndpoint(of fresh: CastDevice) {
        let from = device.endpoint
        var moved = device
        moved.host = fresh.host
        moved.port = fresh.port
        moved.addresses = fresh.addresses
        device = moved
        log = Self.logger(options: options, device: device, localID: localID)
        log.warning("group \(device.friendlyName): leader moved from \(from) to \(device.endpoint)", stateFields([
            "from": .string(from), "to": .string(device.endpoint), "event": "leaderMoved",
        ]))
    }
}
