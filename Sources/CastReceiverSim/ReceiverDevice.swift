import CastCore
import CastLogging
import CastProtocol

/// One simulated Cast device: virtual connections, the platform receiver (`receiver-0`), the
/// running app and its media player.
///
/// A pure state machine: no sockets, timers or clocks. The server calls it with every event and
/// the monotonic time, performs the returned ``DeviceOutput``s in order, and calls
/// ``advance(to:)`` at ``nextDeadline``. Every entry point first runs the timed transitions due
/// by `now`, so a late ``advance(to:)`` changes nothing. Value type; owned by one event loop.
///
/// Heartbeat and device-auth messages belong to the server's connection layer and are ignored.
public struct ReceiverDevice: Sendable {
    public static let platformEndpoint = EndpointID.receiver0.rawValue

    public let profile: DeviceProfile
    public let catalogue: [AppDefinition]
    let log: Logger
    var ids: IdentifierGenerator
    /// The sender of the LOAD waiting for its media check.
    var loadRequester: Requester?
    var player: MediaPlayer
    var connections: Set<SenderConnectionID> = []
    var virtualConnections = VirtualConnectionTable()
    var running: RunningApp?
    /// Device volume (float32-rounded level, like real firmware).
    var volume: Volume
    var announced: DeviceAdvertisementState = .idle
    /// A LAUNCH whose app is still loading (``PlaybackTiming/launchDelay``).
    var pendingLaunch: PendingLaunch?
    let launchDelay: Double
    let appIdleTimeout: Double?
    /// What resets the idle timer: the global override, else the profile's.
    let idleResetBy: FieldProfile.IdleReset
    /// The TV's power and input, and what covers the app (``ScreenState``).
    var screen = ScreenSwitches()
    /// Draws the profile's chances (CANCELLED, hangs); seeded, so a run repeats.
    var fieldRandom: IdentifierGenerator
    /// The next this many LAUNCHes hang (the control socket's `launch-hang`).
    var launchesToHang = 0

    struct PendingLaunch: Sendable {
        var definition: AppDefinition
        var requestID: RequestID
        var requester: Requester
        /// When the LAUNCH is answered; nil: never (it hangs).
        var due: Double?
        var outcome: LaunchOutcome
    }

    /// How a LAUNCH ends (``FieldProfile/Launch``).
    enum LaunchOutcome: String, Sendable {
        case ready, cancelled, hang
    }
    var ignoredMessages = 0
    var rejectedMessages = 0
    /// Set on a group endpoint: its members (``ReceiverDevice+Multizone``).
    var group: MultizoneGroupState?
    /// The groups this device belongs to and the ones it plays for now.
    var memberships = MultizoneMemberships()

    /// The app that runs: its definition and session (`sessionId == transportId`).
    struct RunningApp: Sendable {
        var definition: AppDefinition
        var sessionID: String
        var transportID: String { sessionID }
        /// What a web app (DashCast, Home Assistant) shows.
        var page = WebAppPage()
        /// The last sign of use: the launch, a sender's message to the app, media playing. With
        /// ``PlaybackTiming/appIdleTimeout`` the device stops an app without media that long after.
        var lastActivity: Double = 0
    }

    /// - Parameters:
    ///   - catalogue: apps that LAUNCH can start (first entry wins for a repeated id).
    ///   - mediaRules: first match wins (videoInfo, duration, load errors).
    ///   - idSeed: makes sessionIds/transportIds and queue shuffles reproducible.
    ///   - fieldSeed: seeds the field profile's chances (CANCELLED, hangs); nil: from `idSeed`.
    ///   - logSystem: where records go (`ReceiverDevice`, `MediaPlayer`); tests pass a private one.
    public init(
        profile: DeviceProfile, catalogue: [AppDefinition], mediaRules: [MediaRule], timing: PlaybackTiming = .init(),
        idSeed: UInt64, fieldSeed: UInt64? = nil, logSystem: LogSystem = .shared
    ) {
        self.profile = profile
        self.catalogue = catalogue
        launchDelay = max(0, profile.field.launch.readyAfter ?? timing.launchDelay)
        appIdleTimeout = (timing.appIdleTimeout ?? profile.field.appIdleTimeout).map { max(0, $0) }
        idleResetBy = timing.idleResetBy ?? profile.field.idleResetBy
        fieldRandom = IdentifierGenerator(seed: fieldSeed ?? (idSeed ^ 0xF1E1_D0F1_E1D0_F1E1))
        let deviceFields: LogFields = ["device": .string(profile.uuid)]
        log = Logger(class: "ReceiverDevice", system: logSystem).with(deviceFields)
        ids = IdentifierGenerator(seed: idSeed)
        let rules = MediaRuleSet(mediaRules)
        player = MediaPlayer(timing: timing, rules: rules, seed: idSeed ^ 0x5DEE_CE66_D1CE_4E5B,
                             log: Logger(class: "MediaPlayer", system: logSystem).with(deviceFields),
                             playbackRates: profile.playbackRates, firstFrame: profile.firstFrame,
                             clockDriftPPM: profile.clockDriftPPM)
        volume = Volume(level: Self.deviceLevel(profile.initialVolume), muted: false)
        for invalid in rules.invalidRules {
            log.warning("media rule \(invalid.index) never matches: \(invalid.reason)", ["rule": .int(invalid.index)])
        }
    }

    /// Levels as a float32 device reports them (`0.45` → `0.44999998807907104`), clamped to 0…1.
    static func deviceLevel(_ level: Double) -> Double {
        guard !level.isNaN else { return 0 }
        return Double(Float(min(1, max(0, level))))
    }

    // MARK: Connections

    /// A sender opened a TCP connection (no virtual connection yet).
    public mutating func connectionOpened(_ id: SenderConnectionID, now: Double) -> [DeviceOutput] {
        let out = advance(to: now)
        connections.insert(id)
        log.debug("connection \(id) opened", ["connection": .int(id.rawValue)])
        return out
    }

    /// The TCP connection is gone: its virtual connections go with it. The app keeps running.
    public mutating func connectionClosed(_ id: SenderConnectionID, now: Double) -> [DeviceOutput] {
        let out = advance(to: now)
        connections.remove(id)
        let closed = virtualConnections.closeAll(on: id)
        log.debug("connection \(id) closed with \(closed.count) virtual connection(s)", [
            "connection": .int(id.rawValue), "virtualConnections": .int(closed.count),
        ])
        return out
    }

    // MARK: Messages

    /// One message from a sender on TCP connection `id`.
    public mutating func receive(_ message: CastMessage, from id: SenderConnectionID, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        if !connections.contains(id) {
            log.debug("message on connection \(id) before connectionOpened", ["connection": .int(id.rawValue)])
            connections.insert(id)
        }
        let namespace = message.namespace
        if namespace == .heartbeat || namespace == .deviceAuth { return out }
        if namespace == .connection {
            out += handleConnection(message, from: id, now: now)
            return out
        }
        let destination = message.destinationID
        let requester = Requester(connection: id, senderID: message.sourceID)
        if destination == Self.platformEndpoint {
            guard namespace == .receiver || namespace == .multizone else {
                return out + ignore(message, id, "no handler for the namespace on receiver-0")
            }
            guard mayTalk(requester, to: destination) else { return out + ignore(message, id, "no virtual connection") }
            if namespace == .multizone {
                return out + deliver(handleMultizone(message.payload), from: destination, requester: requester)
            }
            var effects: [DeviceOutput] = []
            let replies = handleReceiver(message.payload, requester: requester, now: now, effects: &effects)
            out += effects
            out += deliver(replies, from: destination, requester: requester)
            out += announceIfChanged()
            return out
        }
        guard let app = running, destination == app.transportID else {
            return out + ignore(message, id, "unknown destination")
        }
        guard mayTalk(requester, to: destination) else { return out + ignore(message, id, "no virtual connection") }
        if namespace == .media && app.definition.isMediaPlayer {
            let mediaActivity = Self.isMediaActivity(message.payload)
            if idleResetBy == .anyMessage || mediaActivity { running?.lastActivity = now }
            // Media starting brings the app to the front, over any cover; a TV it wakes over CEC
            // says so to every sender (as the LAUNCH's status does).
            if mediaActivity, wake(now: now) { out += cecStatusChanged() }
            out += deliver(player.handle(message.payload, now: now), from: destination, requester: requester,
                           loadRequester: loadRequester)
            if let check = player.checkOutput {
                player.checkOutput = nil
                if case .checkMedia = check { loadRequester = requester }
                out.append(check)
            }
        } else if let mode = app.definition.behaviour(for: namespace) {
            log.debug("app message on \(namespace)", ["namespace": .string(namespace.rawValue), "session": .string(app.sessionID)])
            if idleResetBy == .anyMessage { running?.lastActivity = now }
            switch mode {
            case .dashCast, .homeAssistant:
                out += deliver(webApp(message.payload, on: namespace, mode: mode), from: destination, requester: requester)
            default:
                let reply = CustomNamespaceResponder.respond(to: message.payload, on: namespace, mode: mode)
                out += deliver(reply.map { [$0] } ?? [], from: destination, requester: requester)
            }
        } else {
            out += ignore(message, id, "the app does not handle the namespace")
        }
        return out
    }

    /// Runs the timed transitions due by `now`: end of buffering, end of an item, next item.
    /// Unsolicited statuses (requestId 0) go to every sender connected to the app.
    public mutating func advance(to now: Double) -> [DeviceOutput] {
        player.lastNow = now
        var out = finishLaunch(by: now)
        if let app = running, app.definition.isMediaPlayer {
            // Media shown until now (or until it ended, no later than now) is use of the app.
            if showsMedia { running?.lastActivity = now }
            if showsPlayingMedia { screen.lastWake = now }
            out += deliver(player.advance(to: now), from: app.transportID, requester: nil)
        }
        out += stopIdleApp(by: now)
        out += idleScreenAfterPause(by: now)
        coverWithAmbient(by: now)
        return out
    }

    /// The server's outcome of a ``DeviceOutput/checkMedia(_:)``: `failure` nil when the media
    /// loads (the LOAD is answered now and buffering starts), else the `detailedErrorCode` of
    /// the LOAD_FAILED that answers it (then every sender sees IDLE / ERROR). `reason` is logged.
    /// A report for a media session that no longer waits (replaced, stopped) does nothing.
    /// `duration`: the length the server found in the media (ffprobe); it wins over a media
    /// rule's and the sender's.
    public mutating func mediaChecked(mediaSessionID: Int, failure: DetailedErrorCode?, reason: String, videoInfo: VideoInfo? = nil,
                                      duration: Double? = nil, now: Double) -> [DeviceOutput] {
        var out = advance(to: now)
        guard let app = running, app.definition.isMediaPlayer,
              let replies = player.mediaChecked(mediaSessionID: mediaSessionID, failure: failure, reason: reason, videoInfo: videoInfo,
                                                   duration: duration, now: now) else {
            log.debug("media check of session \(mediaSessionID) ignored: no LOAD waits for it", ["mediaSessionId": .int(mediaSessionID)])
            return out
        }
        out += deliver(replies, from: app.transportID, requester: loadRequester, loadRequester: loadRequester)
        loadRequester = nil
        return out
    }

    /// When ``advance(to:)`` next has work; nil = nothing timed pending.
    public var nextDeadline: Double? {
        var deadlines = [pendingLaunch?.due, idleDeadline, pausedDeadline, ambientDeadline]
        if let app = running, app.definition.isMediaPlayer { deadlines.append(player.nextDeadline) }
        return deadlines.compactMap { $0 }.min()
    }

    // MARK: Routing

    /// The sender of the message being handled.
    struct Requester: Equatable {
        var connection: SenderConnectionID
        var senderID: String
    }

    func mayTalk(_ requester: Requester, to endpoint: String) -> Bool {
        !profile.requiresVirtualConnection
            || virtualConnections.exists(connection: requester.connection, senderID: requester.senderID, endpoint: endpoint)
    }

    /// Turns endpoint replies into sends: source = the endpoint, destination = each sender id.
    mutating func deliver(_ replies: [EndpointReply], from endpoint: String, requester: Requester?,
                          loadRequester: Requester? = nil) -> [DeviceOutput] {
        var out: [DeviceOutput] = []
        for reply in replies {
            if reply.isRejection { rejectedMessages += 1 }
            func send(to connection: SenderConnectionID, _ senderID: String) {
                out.append(.send(CastMessage(sourceID: endpoint, destinationID: senderID, namespace: reply.namespace,
                                             payload: reply.payload), to: connection))
            }
            switch reply.audience {
            case .requester:
                if let requester { send(to: requester.connection, requester.senderID) }
            case .loadRequester:
                if let loadRequester { send(to: loadRequester.connection, loadRequester.senderID) }
            case .others, .everyone:
                for vc in virtualConnections.connections(to: endpoint) {
                    if reply.audience == .others, let requester, vc.connection == requester.connection, vc.senderID == requester.senderID {
                        continue
                    }
                    send(to: vc.connection, vc.senderID)
                }
            }
        }
        return out
    }

    /// Drops a message nobody handles: warning, counted, no reply.
    mutating func ignore(_ message: CastMessage, _ id: SenderConnectionID, _ why: String) -> [DeviceOutput] {
        ignoredMessages += 1
        log.warning("ignored message: \(why)", [
            "namespace": .string(message.namespace.rawValue), "source": .string(message.sourceID),
            "destination": .string(message.destinationID), "connection": .int(id.rawValue),
        ])
        return []
    }
}
