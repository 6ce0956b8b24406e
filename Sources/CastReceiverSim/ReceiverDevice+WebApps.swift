import CastCore
import CastProtocol

/// The web-page apps' side of the device: DashCast and Home Assistant's dashboard receiver, as
/// the real apps answer (see ``AppDefinition/dashCast``, ``AppDefinition/homeAssistantDashboard``),
/// and the idle timeout that stops an app showing no media.
extension ReceiverDevice {
    /// Home Assistant Cast's `receiver_error` codes.
    enum HomeAssistantError: Int64 {
        case authenticationFailed = 2
        case hassURLMissing = 4
        case noHTTPS = 5
        case wrongInstance = 20
        case notConnected = 21
    }

    /// A message to a web app: the page it shows changes; Home Assistant answers.
    mutating func webApp(_ payload: CastMessage.Payload, on namespace: CastNamespace, mode: CustomNamespaceBehaviour.Mode) -> [EndpointReply] {
        guard case .string(let text) = payload, let message = try? JSONValue.parse(text), message.object != nil else {
            log.warning("\(namespace): a message that is not a JSON object ignored", ["namespace": .string(namespace.rawValue)])
            return []
        }
        switch mode {
        case .dashCast: return dashCast(message)
        case .homeAssistant: return homeAssistant(message, namespace: namespace)
        default: return []
        }
    }

    /// DashCast shows `url` (no reply, as the real app). `reload` only counts without `force`:
    /// a forced page replaces the receiver's own page, which then cannot reload it.
    mutating func dashCast(_ message: JSONValue) -> [EndpointReply] {
        guard let url = message["url"]?.string, !url.isEmpty else {
            log.warning("DashCast: a message without a url ignored")
            return []
        }
        let force = message["force"]?.bool ?? false
        let reload = !force && (message["reload"]?.bool ?? false)
        running?.page.url = url
        running?.page.force = force
        running?.page.reloadMillis = reload ? max(0, message["reload_time"]?.int ?? 0) : 0
        // DashCast's receiver is an https page that frames the URL: a browser blocks an http
        // frame in it as mixed content. `force` navigates the whole page instead, which works.
        // (castline's receiver is the operator's page, served as they choose: not judged here.)
        let mixedContent = !force && url.lowercased().hasPrefix("http://") && running?.definition.keepsItselfAlive != true
        running?.page.blocked = mixedContent ? "mixed-content" : nil
        if mixedContent {
            log.warning("DashCast: \(url) is blocked as mixed content (an http page framed in https; send force: true)",
                        ["url": .string(url), "blocked": "mixed-content"])
        }
        log.info("\(running?.definition.displayName ?? "DashCast") shows \(url)\(force ? " (forced: the whole page)" : "")", ["url": .string(url), "force": .bool(force)])
        return []
    }

    mutating func homeAssistant(_ message: JSONValue, namespace: CastNamespace) -> [EndpointReply] {
        func status() -> EndpointReply {
            let page = running?.page ?? WebAppPage()
            return EndpointReply(namespace, [
                "type": "receiver_status", "connected": .bool(page.hassURL != nil), "showDemo": .bool(page.showDemo),
                "hassUrl": page.hassURL.map { .string($0) } ?? .null, "hassUUID": page.hassUUID.map { .string($0) } ?? .null,
                "lovelacePath": page.lovelacePath, "urlPath": page.urlPath,
            ], to: .requester)
        }
        func error(_ code: HomeAssistantError) -> [EndpointReply] {
            log.warning("Home Assistant Cast: receiver_error \(code.rawValue)", ["errorCode": .int(code.rawValue)])
            return [EndpointReply(namespace, ["type": "receiver_error", "error_code": .int(code.rawValue)], to: .requester)]
        }
        let page = running?.page ?? WebAppPage()
        switch message["type"]?.string {
        case "connect":
            guard let url = message["hassUrl"]?.string, !url.isEmpty else { return error(.hassURLMissing) }
            guard url.lowercased().hasPrefix("https://") else { return error(.noHTTPS) }
            guard let token = message["refreshToken"]?.string, !token.isEmpty else { return error(.authenticationFailed) }
            running?.page.hassURL = url
            running?.page.hassUUID = message["hassUUID"]?.string
            log.info("Home Assistant Cast connected to \(url)", ["hassUrl": .string(url)])
            return [status()]
        case "get_status":
            return [status()]
        case "show_lovelace_view":
            guard let connected = page.hassURL else { return error(.notConnected) }
            guard message["hassUrl"]?.string == connected else { return error(.wrongInstance) }
            running?.page.lovelacePath = message["viewPath"] ?? .null
            running?.page.urlPath = message["urlPath"] ?? .null
            running?.page.showDemo = false
            log.info("Home Assistant Cast shows view \(message["viewPath"]?.serialized() ?? "null")", ["hassUrl": .string(connected)])
            return [status()]
        case "show_demo":
            running?.page.showDemo = true
            return [status()]
        default:
            log.warning("Home Assistant Cast: unknown message type ignored", ["type": .string(message["type"]?.string ?? "")])
            return []
        }
    }

    // MARK: Idle timeout

    /// A media session that is not IDLE: what keeps a receiver from stopping its app.
    var showsMedia: Bool {
        if running?.definition.keepsItselfAlive == true { return true }
        guard let session = player.session else { return false }
        return session.playerState != .idle
    }

    /// When the running app, showing no media, is stopped by the idle timeout; nil: never.
    var idleDeadline: Double? {
        guard let timeout = appIdleTimeout, let app = running, !app.definition.isIdleScreen, !showsMedia else { return nil }
        return app.lastActivity + timeout
    }

    /// Stops the app the idle timeout caught (as a Nest Hub stops a dashboard): CLOSE to its
    /// senders and the new RECEIVER_STATUS to everyone.
    mutating func stopIdleApp(by now: Double) -> [DeviceOutput] {
        guard let deadline = idleDeadline, now >= deadline, let app = running else { return [] }
        log.info("app \(app.definition.appID) stopped: no media for \(appIdleTimeout ?? 0) s", ["appId": .string(app.definition.appID)])
        var out = terminateApp(reason: "idle timeout")
        out += deliver([EndpointReply(.receiver, receiverStatusMessage(requestID: .unsolicited), to: .everyone)],
                       from: Self.platformEndpoint, requester: nil)
        out += announceIfChanged()
        return out
    }
}
