import CastCore
import CastLogging
import CastProtocol
import CastTransport
import NIOCore

/// Messages from the device: replies, CLOSE, RECEIVER_STATUS, MEDIA_STATUS.
extension CastSession {
    // MARK: - Inbound

    /// One message of the connection of `current`. A reply's request completes once what the
    /// reply carries is applied: whoever awaited it then sees the new device status, media
    /// status and listener calls.
    func handle(_ inbound: CastInbound, generation current: Int) async {
        defer { inbound.completeReply() }
        guard current == generation else { return }
        let message = inbound.message
        let namespace = message.namespace
        if namespace == .multizone, message.sourceID == EndpointID.receiver0.rawValue {
            handleMultizone(message)
            return
        }
        if namespace != .connection, namespace != .receiver, namespace != .media {
            deliverToChannel(message)
            return
        }
        // A payload that did not decode was logged by the connection's request handler.
        guard let payload = inbound.payload else { return }
        switch payload {
        case .connection(.close):
            await handleClose(from: message.sourceID)
        case .receiver(.receiverStatus(_, let status)):
            await handleReceiverStatus(status)
        case .media(.mediaStatus(_, let statuses)):
            if message.sourceID == application?.transportID || (application == nil && !isFollowing) {
                remoteMediaClient.apply(statuses)
            }
        default:
            break
        }
    }

    func handleClose(from source: String) async {
        if source == EndpointID.receiver0.rawValue {
            log.warning("the device closed our platform connection", stateFields())
            await connection?.close()
            return
        }
        guard let app = application, source == app.transportID, case .connected = machine.state else { return }
        if isFollowing {
            // The RECEIVER_STATUS that answers says what runs now; following it lets the app go.
            _ = receiverStatusRequest(type: "GET_STATUS") { .getStatus(requestID: $0) }
            return
        }
        // Find out why: the RECEIVER_STATUS that follows (or answers GET_STATUS) says whether the
        // app is gone. Asked from a new task: this one must go on reading messages.
        log.info("app \(app.appID) closed our connection; checking whether it still runs", stateFields())
        Task { await self.checkApp(afterCloseOf: app) }
    }

    func checkApp(afterCloseOf app: ApplicationInfo) async {
        guard !transferring else { return }
        let status = try? await receiverRequest(step: "GET_STATUS", type: "GET_STATUS") { .getStatus(requestID: $0) }
        guard case .connected = machine.state, !transferring, application?.sessionID == app.sessionID else { return }
        if let status, !status.applications.contains(where: { $0.sessionID == app.sessionID }) {
            await handleReceiverStatus(status)
        } else {
            await apply(.appGone(.appClosedConnection(appID: app.appID)))
        }
    }

    func handleReceiverStatus(_ status: ReceiverStatus) async {
        let deviceStatus = CastDeviceStatus(status)
        if isFollowing { follow(status) }
        if deviceStatus != self.deviceStatus {
            self.deviceStatus = deviceStatus
            let apps = deviceStatus.applications.map(\.appID).joined(separator: ",")
            log.debug("device status: volume \(deviceStatus.volumeLevel.map { "\($0)" } ?? "?"), muted \(deviceStatus.isMuted.map { "\($0)" } ?? "?"), standby \(deviceStatus.isStandBy.map { "\($0)" } ?? "?"), apps [\(apps)]", stateFields(["apps": .string(apps)]))
            fanout.emit(.deviceStatus(deviceStatus))
            for listener in listeners.current { listener.session(self, didReceiveDeviceStatus: deviceStatus) }
        }
        guard case .connected = machine.state, !transferring, !isFollowing, let app = application else { return }
        guard !status.applications.contains(where: { $0.sessionID == app.sessionID }) else { return }
        if let other = status.activeApplication, other.appID != app.appID || other.sessionID != app.sessionID {
            await apply(.appGone(.appReplaced(appID: app.appID, by: other.appID)))
        } else if await followTransfer(of: app) {
            return
        } else if case .connected = machine.state {
            await apply(.appGone(.appStopped(appID: app.appID)))
        }
    }
}
